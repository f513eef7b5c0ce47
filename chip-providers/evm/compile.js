// Compiles the contracts with the pinned solc (package.json) into the
// artifacts the Rust crate embeds: <Name>.json = {contractName, abi, bytecode}.
// `node compile.js` writes them; `node compile.js --check` compares instead
// and exits 1 if a committed artifact differs from a fresh compile.
const fs = require("fs");
const path = require("path");
const solc = require("solc");

const dir = __dirname;
const sources = ["ChipVault.sol", "TestChip.sol"];
const input = {
  language: "Solidity",
  sources: Object.fromEntries(sources.map((f) => [f, { content: fs.readFileSync(path.join(dir, f), "utf8") }])),
  settings: {
    optimizer: { enabled: true, runs: 200 },
    viaIR: true,
    evmVersion: "cancun",
    metadata: { bytecodeHash: "none" },
    outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
  },
};
const out = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (out.errors || []).filter((e) => e.severity === "error");
for (const e of out.errors || []) console.error(e.formattedMessage);
if (errors.length) process.exit(2);

const check = process.argv.includes("--check");
let differ = false;
for (const f of sources) {
  for (const [name, c] of Object.entries(out.contracts[f])) {
    if (!c.evm.bytecode.object) continue; // interfaces
    const artifact = {
      contractName: name,
      compiler: "solc " + solc.version(),
      abi: c.abi,
      bytecode: "0x" + c.evm.bytecode.object,
    };
    const text = JSON.stringify(artifact, null, 1) + "\n";
    const file = path.join(dir, name + ".json");
    if (check) {
      const old = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
      if (old !== text) {
        console.error(name + ".json differs from a fresh compile of " + f);
        differ = true;
      }
    } else {
      fs.writeFileSync(file, text);
      console.log("wrote " + name + ".json (" + c.evm.bytecode.object.length / 2 + " bytes of init code)");
    }
  }
}
process.exit(differ ? 1 : 0);
