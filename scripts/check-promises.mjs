// Finds promises that nobody awaits: the by-hand stand-in for typescript-eslint's
// no-floating-promises and no-misused-promises, over the program tsconfig.json compiles.
//   node scripts/check-promises.mjs [tsconfig]   prints each finding; exits 1 when there is any
//   (tsconfig.typecheck.json takes the tests in too)
// A deliberate fire-and-forget is written `void promise` and is not reported.
import path from "node:path";
import ts from "typescript";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const configFile = ts.readConfigFile(path.join(root, process.argv[2] ?? "tsconfig.json"), ts.sys.readFile);
const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
const program = ts.createProgram(parsed.fileNames, parsed.options);
const checker = program.getTypeChecker();

const isThenable = (type) => {
  if (type.isUnion()) return type.types.some(isThenable);
  const then = type.getProperty("then");
  if (!then) return false;
  const t = checker.getTypeOfSymbol(then);
  return t.getCallSignatures().length > 0;
};
const returnsThenable = (fn) => {
  const sig = checker.getSignatureFromDeclaration(fn);
  return sig ? isThenable(checker.getReturnTypeOfSignature(sig)) : false;
};
/** A promise, or an array of them (what `.map(async …)` makes). */
const holdsPromise = (type) => isThenable(type) || (checker.isArrayType(type) && isThenable(checker.getTypeArguments(type)[0]));
const maybeAbsent = (type) => type.isUnion() && type.types.some((t) => (t.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined)) !== 0);
/** `p.catch(f)` and `p.then(f, g)` handle the rejection themselves. */
const handled = (e) => ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression) && (e.expression.name.text === "catch" || (e.expression.name.text === "then" && e.arguments.length === 2));
const strip = (e) => (ts.isParenthesizedExpression(e) ? strip(e.expression) : e);

const PREDICATES = new Set(["filter", "some", "every", "find", "findIndex", "findLast", "sort", "forEach", "reduce", "flatMap"]);
const CALLBACK_HOSTS = new Set(["setInterval", "setTimeout", "on", "once", "addEventListener", "setImmediate"]);

const findings = [];
function report(node, sf, what) {
  const { line, character } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
  findings.push(`${path.relative(root, sf.fileName)}:${line + 1}:${character + 1}: ${what}: ${node.getText(sf).slice(0, 100).replace(/\s+/g, " ")}`);
}

for (const sf of program.getSourceFiles()) {
  if (sf.isDeclarationFile || !sf.fileName.startsWith(root) || sf.fileName.includes("node_modules")) continue;
  const visit = (node) => {
    if (ts.isExpressionStatement(node)) {
      const e = strip(node.expression);
      if (!ts.isVoidExpression(e) && !ts.isAwaitExpression(e) && !handled(e) && (ts.isCallExpression(e) || ts.isPropertyAccessExpression(e) || ts.isConditionalExpression(e) || ts.isBinaryExpression(e))) {
        const isAssign = ts.isBinaryExpression(e) && e.operatorToken.kind >= ts.SyntaxKind.FirstAssignment && e.operatorToken.kind <= ts.SyntaxKind.LastAssignment;
        if (!isAssign && isThenable(checker.getTypeAtLocation(e))) report(node, sf, "floating promise");
      }
    }
    // A promise where a truth value is expected: always true.
    const cond = ts.isIfStatement(node) || ts.isWhileStatement(node) || ts.isDoStatement(node) ? node.expression : ts.isConditionalExpression(node) ? node.condition : ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.ExclamationToken ? node.operand : ts.isBinaryExpression(node) && [ts.SyntaxKind.AmpersandAmpersandToken, ts.SyntaxKind.BarBarToken].includes(node.operatorToken.kind) ? node.left : undefined;
    // (A promise that may be absent, `Promise<T> | null`, is a presence test, not this mistake.)
    if (cond && isThenable(checker.getTypeAtLocation(cond)) && !maybeAbsent(checker.getTypeAtLocation(cond))) report(cond, sf, "promise used as a condition");
    if (ts.isVariableDeclaration(node) && node.initializer && checker.isArrayType(checker.getTypeAtLocation(node.initializer)) && holdsPromise(checker.getTypeAtLocation(node.initializer)))
      report(node, sf, "array of promises (await them with Promise.all, or map in order with mapSeq)");
    // A promise kept in an object or array literal is awaited by nobody, unless the array goes to Promise.all & co.
    if ((ts.isPropertyAssignment(node) && node.initializer) || ts.isShorthandPropertyAssignment(node) || ts.isSpreadAssignment(node)) {
      const value = ts.isPropertyAssignment(node) ? node.initializer : ts.isSpreadAssignment(node) ? node.expression : node.name;
      if (holdsPromise(checker.getTypeAtLocation(value))) report(node, sf, "promise stored in an object literal");
    }
    if (ts.isArrayLiteralExpression(node)) {
      const p = node.parent;
      const toAll = ts.isCallExpression(p) && ts.isPropertyAccessExpression(p.expression) && ts.isIdentifier(p.expression.expression) && p.expression.expression.text === "Promise";
      if (!toAll) for (const el of node.elements) if (holdsPromise(checker.getTypeAtLocation(el))) report(el, sf, "promise stored in an array literal");
    }
    // A promise handed to a place typed unknown or any (a JSON body, a log line) is taken as a value.
    if (ts.isCallExpression(node) && isThenable(checker.getTypeAtLocation(node))) {
      let p = node.parent;
      while (ts.isParenthesizedExpression(p)) p = p.parent;
      const passed = ts.isPropertyAssignment(p) || ts.isArrayLiteralExpression(p) || (ts.isCallExpression(p) && p.expression !== node) || ts.isTemplateSpan(p);
      const ctx = passed ? checker.getContextualType(node) : undefined;
      const loose = ctx && (ctx.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) !== 0;
      const toAll = ts.isArrayLiteralExpression(p) && ts.isCallExpression(p.parent) && /^Promise\./.test(p.parent.expression.getText(sf));
      const intoJest = ts.isCallExpression(p) && /^(expect|Promise\.\w+)$/.test(p.expression.getText(sf));
      if (loose && !toAll && !intoJest) report(node, sf, "promise passed where any value is taken");
    }
    // An async function where a function returning a plain value is expected: its caller never awaits it.
    if ((ts.isArrowFunction(node) || ts.isFunctionExpression(node)) && returnsThenable(node)) {
      const ctx = checker.getContextualType(node);
      const sigs = ctx ? checker.getSignaturesOfType(ctx, ts.SignatureKind.Call) : [];
      const loose = sigs.length > 0 && sigs.every((sig) => {
        const r = checker.getReturnTypeOfSignature(sig);
        return (r.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown | ts.TypeFlags.Void)) !== 0 && !isThenable(r);
      });
      const host = ts.isCallExpression(node.parent) ? node.parent.expression.getText(sf) : "";
      // Test frameworks, event emitters and timers are reported by their own rules, or await what they are given.
      if (loose && sf.fileName.startsWith(path.join(root, "src/")) && !/^(test|it|describe|beforeAll|afterAll|beforeEach|afterEach|test\.each\(.*\)|.*\.(on|once|action|then|catch|finally)|setInterval|setTimeout|setImmediate)$/.test(host))
        report(node, sf, "async function where a plain value's function is expected");
    }
    // jest: expect(promise).toBe… compares the promise object, not its value.
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "expect" && node.arguments.length === 1 && isThenable(checker.getTypeAtLocation(node.arguments[0]))) {
      const p = node.parent;
      if (!(ts.isPropertyAccessExpression(p) && ["resolves", "rejects"].includes(p.name.text))) report(node.arguments[0], sf, "expect() given a promise");
    }
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const name = ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : "";
      for (const arg of node.arguments) {
        if (!(ts.isArrowFunction(arg) || ts.isFunctionExpression(arg))) continue;
        if (!returnsThenable(arg)) continue;
        if (PREDICATES.has(name) && ts.isPropertyAccessExpression(callee)) report(arg, sf, `async callback to .${name}()`);
        else if (CALLBACK_HOSTS.has(name)) report(arg, sf, `async callback to ${name}() (its rejection is unhandled)`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}
for (const f of findings) console.log(f);
console.error(`${findings.length} finding(s)`);
process.exit(findings.length ? 1 : 0);
