// Validate documents against a JSON Schema with ajv in strict mode (every strict option on).
// Usage: node check_schema.mjs SCHEMA.json DOC.json...
// Prints one JSON line: {"compiled": true|false, "error": "...", "results": {DOC: [errors]}}.
import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const [schemaPath, ...docs] = process.argv.slice(2);
const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats(ajv);
const out = { compiled: false, error: null, results: {} };
let validate;
try {
  validate = ajv.compile(JSON.parse(readFileSync(schemaPath, "utf8")));
  out.compiled = true;
} catch (e) {
  out.error = String(e && e.message ? e.message : e);
}
if (validate) {
  for (const doc of docs) {
    const ok = validate(JSON.parse(readFileSync(doc, "utf8")));
    out.results[doc] = ok ? [] : validate.errors.map((e) => `${e.instancePath || "/"} ${e.message}`);
  }
}
console.log(JSON.stringify(out));
process.exit(out.compiled && Object.values(out.results).every((r) => r.length === 0) ? 0 : 1);
