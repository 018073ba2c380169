/**
 * The layers of each package, as the linter enforces them (`npm run lint` runs `depcruise`). A rule names
 * the folder that may not import another; ARCHITECTURE.md explains the layers.
 */
const forge = 'packages/forge/src';
const machineApi = 'packages/machine-api/src';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'forge-foundations-import-nothing-above',
      comment:
        'forge store/, structs/ and git/ are the foundation: they never import the layers built on them ' +
        '(convert/, services/, auth/, oauth/, api/, web/).',
      severity: 'error',
      from: { path: `^${forge}/(store|structs|git)/` },
      to: { path: `^${forge}/(convert|services|auth|oauth|api|web)/` },
    },
    {
      name: 'forge-convert-below-services',
      comment:
        'forge convert/ turns store rows into wire shapes (structs/); services call it, so it never calls ' +
        'services/ or anything above. Naming the type of a value a service hands it (`import type`) couples ' +
        'no code and is allowed.',
      severity: 'error',
      from: { path: `^${forge}/convert/` },
      to: { path: `^${forge}/(services|auth|oauth|api|web)/`, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'forge-services-not-http',
      comment:
        'forge services/ hold the rules; the HTTP layer (api/, web/, oauth/ routes) calls them, never the reverse.',
      severity: 'error',
      from: { path: `^${forge}/services/` },
      to: { path: `^${forge}/api/` },
    },
    {
      name: 'forge-auth-not-api',
      comment: 'forge auth/ runs before any route; the routes (api/) use it, never the reverse.',
      severity: 'error',
      from: { path: `^${forge}/auth/` },
      to: { path: `^${forge}/api/` },
    },
    {
      name: 'machine-api-domain-not-server',
      comment:
        'machine-api domain folders (machines/, jobs/, queue/, design/, slicer/, events/, access/, farm/, spoolman/) never ' +
        'import the HTTP layer (server/); the server calls them.',
      severity: 'error',
      from: { path: `^${machineApi}/(machines|jobs|queue|design|slicer|events|access|farm|spoolman)/` },
      to: { path: `^${machineApi}/server/` },
    },
    {
      name: 'machine-api-design-below-slicer',
      comment:
        'machine-api design/ reads designs (measure, check); slicer/ and jobs/ use it, so it never imports them.',
      severity: 'error',
      from: { path: `^${machineApi}/design/` },
      to: { path: `^${machineApi}/(slicer|jobs|queue)/` },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
  },
};
