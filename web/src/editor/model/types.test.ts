/**
 * One canvas type: the editor's document types are derived from the generated api types
 * (schema.d.ts), never written again by hand (issue 36). This reads model/types.ts and the canvas
 * path's sources with the TypeScript parser, so a hand-written canvas interface or a cast coming
 * back fails `npm run test` (the type checker alone would accept both).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const editor = join(here, '..');
const read = (path: string) => readFileSync(path, 'utf8');

function parse(path: string): ts.SourceFile {
  return ts.createSourceFile(path, read(path), ts.ScriptTarget.Latest, true);
}

/** The names of components['schemas'] in the generated file. */
function schemaNames(): Set<string> {
  const file = parse(join(editor, '..', 'api', 'schema.d.ts'));
  const names = new Set<string>();
  const visit = (node: ts.Node) => {
    if (ts.isPropertySignature(node) && node.name.getText(file) === 'schemas' && node.type && ts.isTypeLiteralNode(node.type)) {
      for (const m of node.type.members) if (m.name) names.add(m.name.getText(file).replace(/"/g, ''));
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return names;
}

/**
 * The document's types the api does not model (no schema to derive them from): what the editor
 * keeps on a node to redraw it (its status, its test's reply, the chosen account), and fields a kind's
 * compiler reads from a node's extra keys (`timerConfigs`, the form's `formFields`, the scheduler's
 * `selectedValue`). A new type of model/types.ts is derived from `Schemas[...]`, or listed here with
 * the reason the api's OpenAPI model does not have it.
 */
const EDITOR_ONLY = new Set([
  'AppStatusType',
  'AppStatus',
  'SelectedAccount',
  'OptionEntry',
  'ResponsePayload',
  'TimerConfig',
  'FormField',
  'ScheduleType',
  'TimeSpan',
  'ScheduleValue',
  'HttpMethod',
]);

/** The interfaces kind folders augment (`declare module`): registries, empty here. */
const REGISTRIES = new Set(['NodeKindMap', 'KindDataMap']);

/** The canvas's parts, each with the generated schema it is derived from. */
const DERIVED: Record<string, string> = {
  CanvasJson: 'Canvas',
  SavedNode: 'Canvas',
  BaseNodeData: 'NodeData',
  AppDetail: 'AppDetail',
  SelectedEvent: 'NodeData',
  KeyValue: 'KeyEntry',
  ApiDetails: 'ApiDetails',
  ApiSelectedValue: 'SelectedValue',
  ConfigResponse: 'ConfigResponse',
  FilterCondition: 'FilterCondition',
  OnErrorSettings: 'CanvasOnError',
  FlowLink: 'Link',
  RunAlertSettings: 'CanvasAlert',
  RunControlSettings: 'CanvasRunControl',
};

/** The type declarations of a file: name, kind and the text of what it is declared as. */
function declarations(file: ts.SourceFile) {
  const found: { name: string; kind: 'interface' | 'type'; text: string; empty: boolean; generic: boolean }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isInterfaceDeclaration(node))
      found.push({ name: node.name.text, kind: 'interface', text: node.getText(file), empty: node.members.length === 0, generic: false });
    else if (ts.isTypeAliasDeclaration(node))
      found.push({ name: node.name.text, kind: 'type', text: node.type.getText(file), empty: false, generic: Boolean(node.typeParameters?.length) });
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return /\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name) ? [path] : [];
  });
}

describe('the editor canvas is the generated type', () => {
  const types = declarations(parse(join(here, 'types.ts')));
  const byName = new Map(types.map((d) => [d.name, d]));

  it('declares no interface but the kinds registries, and those empty', () => {
    const interfaces = types.filter((d) => d.kind === 'interface');
    expect(interfaces.map((d) => d.name).sort()).toEqual([...REGISTRIES].sort());
    for (const d of interfaces) expect(d.empty, d.name).toBe(true);
  });

  it('derives each part of the canvas from its schema', () => {
    const schemas = schemaNames();
    for (const [name, schema] of Object.entries(DERIVED)) {
      expect(schemas.has(schema), `${schema} is not a schema of schema.d.ts`).toBe(true);
      const d = byName.get(name);
      expect(d, `${name} is declared in types.ts`).toBeDefined();
      // Directly, or through the canvas's or a node's alias (ApiCanvas, ApiNodeOf).
      const via = schema === 'Canvas' ? /Schemas\['Canvas'\]|ApiCanvas|ApiNodeOf</ : new RegExp(`Schemas\\['${schema}'\\]`);
      expect(d!.text, `${name} is derived from Schemas['${schema}']`).toMatch(via);
    }
  });

  it('writes by hand only the types the api does not model', () => {
    const schemas = schemaNames();
    // A type reaches the generated schema, a registry, or React Flow's node through the file's aliases.
    const roots = /\bSchemas\b|\bcomponents\b|\bNodeKindMap\b|\bKindDataMap\b|\bNode</;
    const derived = new Set<string>();
    for (let grown = true; grown; ) {
      grown = false;
      for (const d of types) {
        if (d.kind !== 'type' || derived.has(d.name)) continue;
        const uses = [...derived].some((n) => new RegExp(`\\b${n}\\b`).test(d.text));
        if (roots.test(d.text) || uses) {
          derived.add(d.name);
          grown = true;
        }
      }
    }
    // Generic helpers (Narrow, KeysOf...) are no shape of their own.
    const handWritten = types.filter((d) => d.kind === 'type' && !d.generic && !derived.has(d.name)).map((d) => d.name);
    expect(handWritten.filter((n) => !EDITOR_ONLY.has(n))).toEqual([]);
    // Once the api models one of them, it is derived from its schema instead.
    expect([...EDITOR_ONLY].filter((n) => schemas.has(n))).toEqual([]);
    for (const n of EDITOR_ONLY) expect(byName.has(n), `${n} is still declared in types.ts`).toBe(true);
  });

  it('has no second canvas type elsewhere in the editor, and no cast on the canvas path', () => {
    const names = new Set([...Object.keys(DERIVED), 'FlowNodeData', 'FlowNode', 'Flow']);
    const elsewhere = sources(editor)
      .filter((p) => relative(editor, p) !== join('model', 'types.ts'))
      .flatMap((p) => declarations(parse(p)).filter((d) => names.has(d.name)).map((d) => `${relative(editor, p)}: ${d.name}`));
    expect(elsewhere).toEqual([]);
    for (const path of ['useSaveFlow.ts', 'save.ts', join('model', 'canvas.ts'), join('api', 'editorApi.ts')]) {
      const text = read(join(editor, path));
      expect(text, path).not.toMatch(/as unknown as|as never\b|as any\b/);
    }
  });
});
