// Validates Kubernetes manifests offline against the API's OpenAPI schemas, as compiled by the
// kubernetes-models package: types, formats (quantities such as "500m", ports, label values), required
// fields and enumerations. It does not flag unknown fields (the compiled schemas allow them), which is
// why tests/Integration/Ops/KubernetesManifestsTest.php also checks the fields Weft relies on by name.
//
//   node scripts/kubernetes-validate/validate.mjs deploy/kubernetes/*.yaml
//
// Exit code 0 when every document of every file is valid, 1 when one is not (each error on stderr),
// 2 on bad usage or an unreadable file.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

const files = process.argv.slice(2);
if (files.length === 0) {
    console.error("usage: node validate.mjs MANIFEST.yaml...");
    process.exit(2);
}

// "apps/v1" + "Deployment" -> kubernetes-models/apps/v1/Deployment; the core group "v1" -> v1/Service.
async function model(apiVersion, kind) {
    if (typeof apiVersion !== "string" || typeof kind !== "string" || !/^[A-Za-z0-9.\/-]+$/.test(apiVersion) || !/^[A-Za-z0-9]+$/.test(kind)) {
        return null;
    }
    try {
        const module = await import(`kubernetes-models/${apiVersion}/${kind}`);
        return module[kind] ?? null;
    } catch {
        return null;
    }
}

let valid = 0;
let invalid = 0;
for (const file of files) {
    let text;
    try {
        text = readFileSync(file, "utf8");
    } catch (e) {
        console.error(`${file}: cannot read: ${e.message}`);
        process.exit(2);
    }
    for (const [index, doc] of parseAllDocuments(text).entries()) {
        const where = `${file} (document ${index + 1})`;
        if (doc.errors.length > 0) {
            console.error(`${where}: not YAML: ${doc.errors[0].message}`);
            invalid++;
            continue;
        }
        const object = doc.toJS();
        if (object === null || object === undefined) {
            continue; // an empty document, such as after a trailing "---"
        }
        const Model = await model(object.apiVersion, object.kind);
        const name = `${object.kind ?? "?"}/${object.metadata?.name ?? "?"}`;
        if (Model === null) {
            console.error(`${where}: ${name}: no schema for apiVersion '${object.apiVersion}' kind '${object.kind}'`);
            invalid++;
            continue;
        }
        try {
            new Model(object).validate();
            console.log(`valid: ${name} (${where})`);
            valid++;
        } catch (e) {
            const errors = Array.isArray(e.errors) ? e.errors.map((err) => `${err.instancePath || "/"} ${err.message}`) : [e.message];
            console.error(`${where}: ${name} is invalid:\n  ${errors.join("\n  ")}`);
            invalid++;
        }
    }
}
console.log(`kubernetes-models: ${valid} valid document(s), ${invalid} invalid`);
process.exit(invalid > 0 ? 1 : 0);
