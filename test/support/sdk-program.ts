/**
 * The SDK read with the TypeScript compiler, as the tests that hold schema.json and the reference
 * pages to it need it: one program over its files, and the outputs a resource class declares.
 */
import * as ts from "typescript";

/** A type-checked program over SDK source files, with the compiler options the project builds with. */
export function sdkProgram(files: readonly string[]): ts.Program {
  return ts.createProgram(files, {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noEmit: true,
  });
}

/**
 * The outputs a resource class declares: its `declare readonly` properties (the engine's), and the
 * `pulumi.Output` properties it makes from them in the program (`access`), in order.
 */
export function declaredOutputs(node: ts.ClassDeclaration): ts.PropertyDeclaration[] {
  return node.members.filter(
    (m): m is ts.PropertyDeclaration =>
      ts.isPropertyDeclaration(m) &&
      (!!m.modifiers?.some((mod) => mod.kind === ts.SyntaxKind.DeclareKeyword) ||
        (m.type !== undefined &&
          ts.isTypeReferenceNode(m.type) &&
          ts.isQualifiedName(m.type.typeName) &&
          m.type.typeName.right.text === "Output")),
  );
}
