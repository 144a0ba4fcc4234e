// Writes dist/build-info.json: the version and commit that `logdrain --version` prints and the
// logdrain_build_info metric carries. The commit comes from LOGDRAIN_COMMIT (an image build passes
// it as a build argument), else from git, else "unknown".
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';

const root = new URL('..', import.meta.url);
const { version } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
let commit = process.env.LOGDRAIN_COMMIT || 'unknown';
if (commit === 'unknown') {
  try {
    commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim() || 'unknown';
  } catch {
    // Not a git checkout (a source archive, an image build without the commit): say so.
  }
}
mkdirSync(new URL('dist/', root), { recursive: true });
writeFileSync(new URL('dist/build-info.json', root), JSON.stringify({ version, commit }) + '\n');
