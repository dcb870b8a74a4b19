#!/usr/bin/env python3
"""Writes the fixed-arity overloads that stay beside the parameter-pack families: typed
sends and closure methods of 0 to MAX_ARITY arguments, whose fast paths (integer registers,
word bodies, direct `Int` bodies) need each arity spelt out. One table, below; the files it
writes are checked in and CI runs this script with --check, which fails when one differs.

    scripts/generate-arity-ladders.py           rewrite the files
    scripts/generate-arity-ladders.py --check   exit 1 if a file is out of date
"""
import generated

MAX_ARITY = 4
LETTERS = "ABCD"


def generic(letters, extra=()):
    params = [f"{x}: MessageArgument" for x in letters] + list(extra)
    return f"<{', '.join(params)}>" if params else ""


def typed_send():
    out = ["""import CDynamicRuntime

// Typed sends for arities 0 to 4. When the method's signature key matches the call's and every
// argument travels in an integer register, the IMP is called directly; otherwise the general
// path checks each type and uses libffi. Written by scripts/generate-arity-ladders.py.

extension MessageReceiver {"""]
    for n in range(MAX_ARITY + 1):
        ls = LETTERS[:n]
        vs = ls.lower()
        args = "".join(f", _ {v}: {l}" for l, v in zip(ls, vs))
        key = "".join(f" | {l}.keyCode << {5 * (i + 1)}" for i, l in enumerate(ls))
        if n == 0:
            words, count, exact = "true ? (0, 0, 0, 0) : nil", 0, "true"
            argv, values, store = "()", "{ _ in [] }", "{ _, _, _ in }"
        else:
            cond = " && ".join(f"{l}.passesInWord" for l in ls)
            ws = [f"{v}.argumentWord" for v in vs] + ["0"] * (MAX_ARITY - n)
            words = f"{cond} ? ({', '.join(ws)}) : nil"
            count = n
            exact = " && ".join(f"{l}.keyIsExact" for l in ls)
            if n == 1:
                argv, values, store = "a", "{ [$0] }", "{ a, _, p in a.storeArgument(to: p) }"
            else:
                argv = f"({', '.join(vs)})"
                values = "{ [" + ", ".join(f"$0.{i}" for i in range(n)) + "] }"
                cases = " ".join(f"case {i}: x.{i}.storeArgument(to: p)" for i in range(n - 1))
                store = ("{ x, i, p in\n                switch i { " + cases +
                         f" default: x.{n - 1}.storeArgument(to: p) }}\n            }}")
        for void in (False, True):
            if void:
                out.append(f"""
    /// A typed send to a void method: `try obj.send("reset", as: Void.self)`.
    @inlinable @inline(__always)
    public func send{generic(ls)}(_ selector: Selector{args}, as _: Void.Type) throws(RuntimeError) {{
        let _: NoReturn = try MessageSend.typed(
            self, selector, key: NoReturn.returnKeyCode{key},""")
            else:
                out.append(f"""
    /// A typed send: `let sum: Int = try obj.send("add:to:", 1, 2)`. The call's types must
    /// match the method's signature, or it throws `signatureMismatch`.
    @inlinable @inline(__always)
    public func send{generic(ls, ["R: MessageReturn"])}(_ selector: Selector{args}, as _: R.Type = R.self) throws(RuntimeError) -> R {{
        try MessageSend.typed(
            self, selector, key: R.returnKeyCode{key},""")
            out.append(f"""            words: {words}, count: {count}, exact: {exact},
            args: {argv}, values: {values}, store: {store})
    }}""")
    out.append("}\n")
    return "\n".join(out).replace("extension MessageReceiver {\n\n", "extension MessageReceiver {\n", 1)


def closure_methods():
    out = ["""import CDynamicRuntime

// Typed closure overloads for arities 0 to 4. A closure's parameter and return types imply its
// signature; `types`, when given, must agree with it, or the call throws signatureMismatch.
// A NULL for a parameter of a non-optional pointer-like type (`Selector`, `Object`, raw
// pointers) throws invalidArgument to the sender instead of reaching the closure.
// Written by scripts/generate-arity-ladders.py: edit its table and templates, not this file.

extension RuntimeClass {"""]
    for n in range(MAX_ARITY + 1):
        ls = LETTERS[:n]
        params = "".join(f", {l}" for l in ls)
        encodings = "[" + ", ".join(f"{l}.typeEncoding" for l in ls) + "]"
        call_args = "".join(f", {l}.argument(args, {i + 2})" for i, l in enumerate(ls))
        for void in (False, True):
            for replacing in (False, True):
                name = "replaceMethod" if replacing else "addMethod"
                doc = ("Replaces (or adds) a method with a Swift closure; returns the previous IMP, if any."
                       if replacing else "Adds a method implemented by a Swift closure (a trampoline slot, or a libffi closure).")
                result = "IMP?" if replacing else "Method"
                tail = "previous" if replacing else "method"
                gen = generic(ls) if void else generic(ls, ["R: MessageReturn"])
                ret = "Void" if void else "R"
                returns = ".void" if void else "R.returnEncoding"
                first = "_" if void else "ret"
                store = "" if void else ".storeReturn(to: ret, of: args)"
                out.append(f"""
    /// {doc}
    @inlinable @discardableResult
    public func {name}{gen}(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef{params}) throws -> {ret}
    ) throws(RuntimeError) -> {result} {{
        let (imp, sig) = try closureIMP(selector, declared: types, returns: {returns}, arguments: {encodings}, word: Self.wordBody(body)) {{ {first}, args in
            try body(ObjectRef(argumentStorage: args[0]!){call_args}){store}
        }}
        return try install(selector, imp, sig, replacing: {'true' if replacing else 'false'}).{tail}
    }}""")
    out.append("}\n")
    out.append(word_bodies())
    return "\n".join(out)


def word_bodies():
    """The word bodies the overloads above hand to `closureIMP`: the closure called with the
    registers as they arrived, each argument read from its own word."""
    out = ["""// The word body of each overload: nil where an argument or the return does not travel in one
// integer register.
extension RuntimeClass {"""]
    for n in range(MAX_ARITY + 1):
        ls = LETTERS[:n]
        vs = "abcd"[:n]
        params = "".join(f", {l}" for l in ls)
        words = ", ".join(["o", "s" if n else "_"] + list(vs) + ["_"] * (4 - n))
        reads = "".join(f",\n                     {l}.fromWord({v}, receiver: o, selector: s, {i + 2})"
                        for i, (l, v) in enumerate(zip(ls, vs)))
        for void in (False, True):
            gen = generic(ls) if void else generic(ls, ["R: MessageReturn"])
            conditions = [f"{l}.passesInWord" for l in ls] + ([] if void else ["R.returnKind != .other"])
            guard = f"\n        guard {', '.join(conditions)} else {{ return nil }}" if conditions else ""
            call = f"try body(ObjectRef(word: o){reads})"
            body = f"{call}\n            return 0" if void else f"{call}.returnWord"
            out.append(f"""
    @inlinable
    static func wordBody{gen}(
        _ body: @escaping (ObjectRef{params}) throws -> {'Void' if void else 'R'}
    ) -> WordBody? {{{guard}
        return {{ {words} in
            {body}
        }}
    }}""")
    out.append("}\n")
    return "\n".join(out)


def int_params(n):
    return "ObjectRef" + "".join(", Int" for _ in range(n))


def int_overloads(throwing):
    """The `Int` overloads of every arity, throwing or not (their docs differ only in that)."""
    if throwing:
        docs = ("    /// Adds a method implemented by a Swift closure of `Int` arguments returning `Int`.",
                "    /// Replaces (or adds) a method with a Swift closure of `Int` arguments returning `Int`; returns the previous IMP, if any.")
    else:
        docs = ("""    /// Adds a method implemented by a Swift closure of `Int` arguments returning `Int` that
    /// does not throw.""", """    /// Replaces (or adds) a method with a Swift closure of `Int` arguments returning `Int` that
    /// does not throw; returns the previous IMP, if any.""")
    effect, flag = (" throws", "") if throwing else ("", ", nonThrowing: true")
    out = []
    for n in range(MAX_ARITY + 1):
        for replacing in (False, True):
            if out:
                out.append("")
            out.append(docs[replacing])
            out.append(f"""    @discardableResult
    public func {'replaceMethod' if replacing else 'addMethod'}(
        _ selector: Selector, types: String? = nil, @IntMethodBody _ body: @escaping @Sendable ({int_params(n)}){effect} -> Int
    ) throws(RuntimeError) -> {'IMP?' if replacing else 'Method'} {{
        let (imp, sig) = try intIMP(selector, types, body{flag})
        return try install(selector, imp, sig, replacing: {'true' if replacing else 'false'}).{'previous' if replacing else 'method'}
    }}""")
    return out


def int_closure_methods():
    out = ["""import CDynamicRuntime

// The `Int` overloads of `addMethod` and `replaceMethod` (arities 0 to 4): a closure of `Int`
// arguments returning `Int` is kept at its own type, so calls reach it without a
// reabstraction thunk (ClosureIMP+IntBody.swift). They take their body through the
// `IntMethodBody` builder, which accepts one `Int` expression: a body that produces no `Int`
// (statements only) does not match them and gets the generic `Void` overloads, as before they
// existed; a body with `return` statements is checked as a plain closure.
// Written by scripts/generate-arity-ladders.py: edit its table and templates, not this file.

/// The body of the `Int` overloads of `RuntimeClass.addMethod` and `replaceMethod`: one `Int`
/// expression, or statements that `return` an `Int`.
///
/// You do not use it by name. It lets a closure such as `{ (_: ObjectRef, a: Int, b: Int) in a + b }`
/// (or the unannotated `{ _, x in x * 2 }`) pick the fast `Int` overloads, while a closure whose
/// statements return nothing keeps registering a `Void` method.
@resultBuilder
public enum IntMethodBody {
    /// Accepts an `Int` expression.
    @inlinable public static func buildExpression(_ value: Int) -> Int { value }
    /// The body's value: its one expression.
    @inlinable public static func buildBlock(_ value: Int) -> Int { value }
}

extension RuntimeClass {"""]
    out += int_overloads(throwing=True)
    out.append("""}

// The closure IMP of each arity, for addMethod and replaceMethod alike.
extension RuntimeClass {""")
    words = "abcd"
    for n in range(MAX_ARITY + 1):
        if n:
            out.append("")
        encodings = "[" + ", ".join("Int.typeEncoding" for _ in range(n)) + "]"
        slots = ", ".join(words[i] if i < n else "_" for i in range(MAX_ARITY))
        converted = "".join(f", Int(bitPattern: UInt({words[i]}))" for i in range(n))
        frame = "".join(f", Int.argument(args, {i + 2})" for i in range(n))
        out.append(f"""    func intIMP(_ selector: Selector, _ types: String?,
                _ body: @escaping @Sendable ({int_params(n)}) throws -> Int, nonThrowing: Bool = false) throws(RuntimeError) -> (IMP, Signature) {{
        try closureIMP(selector, declared: types, returns: Int.returnEncoding, arguments: {encodings},
                       word: {{ o, _, {slots} in UInt64(UInt(bitPattern: try body(ObjectRef(word: o){converted}))) }},
                       direct: DirectIntBody(box: IntMethodBody{n}(body), arity: {n}, nonThrowing: nonThrowing)) {{ ret, args in
            try body(ObjectRef(argumentStorage: args[0]!){frame}).storeReturn(to: ret)
        }}
    }}""")
    out.append("}\n")
    return "\n".join(out)


def non_throwing_int_closure_methods():
    out = ["""import CDynamicRuntime

// The non-throwing `Int` overloads of `addMethod` and `replaceMethod` (arities 0 to 4). A
// closure that cannot throw prefers them to the throwing ones (RuntimeClass+IntClosureMethods
// .swift): its body is stored the same way, but C callers reach it through a thunk that only
// moves the arguments and the closure's context into Swift's registers — no read of the
// receiver's class before the call (an error's name) and no error check after it.
// Written by scripts/generate-arity-ladders.py: edit its table and templates, not this file.

extension RuntimeClass {"""]
    out += int_overloads(throwing=False)
    out.append("}\n")
    return "\n".join(out)


FILES = {
    "Sources/DynamicRuntime/Dispatch/MessageReceiver+TypedSend.swift": typed_send,
    "Sources/DynamicRuntime/Model/RuntimeClass+ClosureMethods.swift": closure_methods,
    "Sources/DynamicRuntime/Model/RuntimeClass+IntClosureMethods.swift": int_closure_methods,
    "Sources/DynamicRuntime/Model/RuntimeClass+NonThrowingIntClosureMethods.swift": non_throwing_int_closure_methods,
}


def main():
    generated.update("generate-arity-ladders", {path: make() for path, make in FILES.items()})


if __name__ == "__main__":
    main()
