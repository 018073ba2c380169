/**
 * `/ui/notifications` (admin scope): notification targets and the delivery log. Add a target (the kind's
 * own fields), send it the test message, switch it on or off, choose its events, remove it; targets of the
 * configuration file are shown read-only. Secrets are write-only: the service only says whether one is set.
 * The parts are in ../notifications/.
 */

import { DeliveryLog } from '../notifications/delivery-log';
import { TargetForm } from '../notifications/target-form';
import { TargetsTable } from '../notifications/targets-table';
import { useNotifications } from '../notifications/use-notifications';
import { useTitle } from '../title';

export function Notifications() {
  useTitle('Notifications');
  const { targets, deliveries, status, setStatus, error, notice, act } = useNotifications();
  return (
    <section aria-labelledby="notify-title">
      <h1 id="notify-title">Notifications</h1>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <h2>Targets</h2>
      {targets === null && !error && <p aria-busy="true">Loading…</p>}
      {targets?.length === 0 && <p>No targets yet.</p>}
      {targets && targets.length > 0 && <TargetsTable targets={targets} act={act} />}
      <TargetForm act={act} />
      <DeliveryLog deliveries={deliveries} status={status} setStatus={setStatus} />
    </section>
  );
}
