#!/usr/bin/env bash
# The whole test suite, from a fresh clone: npm dependencies, the Debian programs the tests drive
# (docker-registry, skopeo, ...), type checks, lint, a build of the CLI, then every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/test-deps.sh
# Everything below runs on the Node 24 runtime the lockfile pins, not on the Node that runs npm.
. scripts/runtime.sh
echo "test: typecheck, lint, build (Node $(node --version), $(command -v node))" >&2
npx tsc -p tsconfig.json --noEmit
npx eslint .
npx knip
npx prettier --check . >/dev/null || { npx prettier --check . ; exit 1; }
npm run build --silent
# The aarch64 Node runtime the release build (npm run dist) injects, pinned in the lockfile.
node scripts/fetch-runtime.mjs arm64 >/dev/null
mkdir -p .work
status=0
AIRGAP_SKIP_BUILD=1 npx vitest run --reporter=default --reporter=json --outputFile.json=.work/vitest.json "$@" || status=$?
# One plain closing line for any reader of the log: "tests: N passed, N failed, N skipped", and how
# many were skipped because the reference material is not here: test/helpers/realdata.ts marks each
# such test "[needs realdata: <where it was looked for>]" (only then).
node -e '
  const r = JSON.parse(require("fs").readFileSync(".work/vitest.json", "utf8"));
  const skipped = r.numPendingTests + r.numTodoTests;
  const mark = "[needs realdata: ";
  const where = new Map();
  for (const f of r.testResults)
    for (const t of f.assertionResults) {
      const at = t.fullName.indexOf(mark);
      if (t.status === "passed" || t.status === "failed" || at < 0) continue;
      const w = t.fullName.slice(at + mark.length, t.fullName.indexOf("]", at));
      where.set(w, (where.get(w) ?? 0) + 1);
    }
  const why = [...where].map(([w, n]) => `${n} need ${w}`).join(", ");
  const note = why ? ` (${why}: the real CRDs and samples, absent here)` : "";
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped${note}`);
' || true
exit "$status"
