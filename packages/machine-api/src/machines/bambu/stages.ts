/**
 * Bambu `stg_cur` values and their names. The numbering is OrcaSlicer's DeviceManager table; the
 * snake_case names are the anchor's `Stage` enum (machine-api §5.2), so `extra.current_stage` reads the same.
 */

const STAGE_NAMES: readonly string[] = [
  'nothing', // -1
  'empty',
  'auto_bed_leveling',
  'heatbed_preheating',
  'sweeping_xy_mech_mode',
  'changing_filament',
  'm400_pause',
  'paused_due_to_filament_runout',
  'heating_hotend',
  'calibrating_extrusion',
  'scanning_bed_surface',
  'inspecting_first_layer',
  'identifying_build_plate_type',
  'calibrating_micro_lidar',
  'homing_toolhead',
  'cleaning_nozzle_tip',
  'checking_extruder_temperature',
  'printing_was_paused_by_the_user',
  'pause_of_front_cover_falling',
  'calibrating_micro_lidar2',
  'calibrating_extrusion_flow',
  'paused_due_to_nozzle_temperature_malfunction',
  'paused_due_to_heat_bed_temperature_malfunction',
  'filament_unloading',
  'skip_step_pause',
  'filament_loading',
  'motor_noise_calibration',
  'paused_due_to_ams_lost',
  'paused_due_to_low_speed_of_the_heat_break_fan',
  'paused_due_to_chamber_temperature_control_error',
  'cooling_chamber',
  'paused_by_the_gcode_inserted_by_the_user',
  'motor_noise_showoff',
  'nozzle_filament_covered_detected_pause',
  'cutter_error_pause',
  'first_layer_error_pause',
  'nozzle_clog_pause',
];

/**
 * The name of a `stg_cur` value, or null for values outside the known table (newer firmware sends e.g. 255
 * when idle; the anchor rejected the whole report for that, we only leave the stage unnamed).
 */
export function stageName(stage: unknown): string | null {
  const value = typeof stage === 'string' ? Number(stage) : stage;
  if (typeof value !== 'number' || !Number.isInteger(value)) return null;
  return STAGE_NAMES[value + 1] ?? null;
}
