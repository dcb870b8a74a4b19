import CDynamicRuntime

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

extension RuntimeClass {
    /// Adds a method implemented by a Swift closure of `Int` arguments returning `Int`.
    @discardableResult
    public func addMethod(
        _ selector: Selector, types: String? = nil, @IntMethodBody _ body: @escaping @Sendable (ObjectRef) throws -> Int
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try intIMP(selector, types, body)
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure of `Int` arguments returning `Int`; returns the previous IMP, if any.
    @discardableResult
    public func replaceMethod(
        _ selector: Selector, types: String? = nil, @IntMethodBody _ body: @escaping @Sendable (ObjectRef) throws -> Int
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try intIMP(selector, types, body)
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure of `Int` arguments returning `Int`.
    @discardableResult
    public func addMethod(
        _ selector: Selector, types: String? = nil, @IntMethodBody _ body: @escaping @Sendable (ObjectRef, Int) throws -> Int
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try intIMP(selector, types, body)
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure of `Int` arguments returning `Int`; returns the previous IMP, if any.
    @discardableResult
    public func replaceMethod(
        _ selector: Selector, types: String? = nil, @IntMethodBody _ body: @escaping @Sendable (ObjectRef, Int) throws -> Int
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try intIMP(selector, types, body)
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure of `Int` arguments returning `Int`.
    @discardableResult
    public func addMethod(
        _ selector: Selector, types: String? = nil, @IntMethodBody _ body: @escaping @Sendable (ObjectRef, Int, Int) throws -> Int
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try intIMP(selector, types, body)
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure of `Int` arguments returning `Int`; returns the previous IMP, if any.
    @discardableResult
    public func replaceMethod(
        _ selector: Selector, types: String? = nil, @IntMethodBody _ body: @escaping @Sendable (ObjectRef, Int, Int) throws -> Int
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try intIMP(selector, types, body)
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure of `Int` arguments returning `Int`.
    @discardableResult
    public func addMethod(
        _ selector: Selector, types: String? = nil, @IntMethodBody _ body: @escaping @Sendable (ObjectRef, Int, Int, Int) throws -> Int
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try intIMP(selector, types, body)
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure of `Int` arguments returning `Int`; returns the previous IMP, if any.
    @discardableResult
    public func replaceMethod(
        _ selector: Selector, types: String? = nil, @IntMethodBody _ body: @escaping @Sendable (ObjectRef, Int, Int, Int) throws -> Int
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try intIMP(selector, types, body)
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure of `Int` arguments returning `Int`.
    @discardableResult
    public func addMethod(
        _ selector: Selector, types: String? = nil, @IntMethodBody _ body: @escaping @Sendable (ObjectRef, Int, Int, Int, Int) throws -> Int
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try intIMP(selector, types, body)
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure of `Int` arguments returning `Int`; returns the previous IMP, if any.
    @discardableResult
    public func replaceMethod(
        _ selector: Selector, types: String? = nil, @IntMethodBody _ body: @escaping @Sendable (ObjectRef, Int, Int, Int, Int) throws -> Int
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try intIMP(selector, types, body)
        return try install(selector, imp, sig, replacing: true).previous
    }
}

// The closure IMP of each arity, for addMethod and replaceMethod alike.
extension RuntimeClass {
    func intIMP(_ selector: Selector, _ types: String?,
                _ body: @escaping @Sendable (ObjectRef) throws -> Int, nonThrowing: Bool = false) throws(RuntimeError) -> (IMP, Signature) {
        try closureIMP(selector, declared: types, returns: Int.returnEncoding, arguments: [],
                       word: { o, _, _, _, _, _ in UInt64(UInt(bitPattern: try body(ObjectRef(word: o)))) },
                       direct: DirectIntBody(box: IntMethodBody0(body), arity: 0, nonThrowing: nonThrowing)) { ret, args in
            try body(ObjectRef(argumentStorage: args[0]!)).storeReturn(to: ret)
        }
    }

    func intIMP(_ selector: Selector, _ types: String?,
                _ body: @escaping @Sendable (ObjectRef, Int) throws -> Int, nonThrowing: Bool = false) throws(RuntimeError) -> (IMP, Signature) {
        try closureIMP(selector, declared: types, returns: Int.returnEncoding, arguments: [Int.typeEncoding],
                       word: { o, _, a, _, _, _ in UInt64(UInt(bitPattern: try body(ObjectRef(word: o), Int(bitPattern: UInt(a))))) },
                       direct: DirectIntBody(box: IntMethodBody1(body), arity: 1, nonThrowing: nonThrowing)) { ret, args in
            try body(ObjectRef(argumentStorage: args[0]!), Int.argument(args, 2)).storeReturn(to: ret)
        }
    }

    func intIMP(_ selector: Selector, _ types: String?,
                _ body: @escaping @Sendable (ObjectRef, Int, Int) throws -> Int, nonThrowing: Bool = false) throws(RuntimeError) -> (IMP, Signature) {
        try closureIMP(selector, declared: types, returns: Int.returnEncoding, arguments: [Int.typeEncoding, Int.typeEncoding],
                       word: { o, _, a, b, _, _ in UInt64(UInt(bitPattern: try body(ObjectRef(word: o), Int(bitPattern: UInt(a)), Int(bitPattern: UInt(b))))) },
                       direct: DirectIntBody(box: IntMethodBody2(body), arity: 2, nonThrowing: nonThrowing)) { ret, args in
            try body(ObjectRef(argumentStorage: args[0]!), Int.argument(args, 2), Int.argument(args, 3)).storeReturn(to: ret)
        }
    }

    func intIMP(_ selector: Selector, _ types: String?,
                _ body: @escaping @Sendable (ObjectRef, Int, Int, Int) throws -> Int, nonThrowing: Bool = false) throws(RuntimeError) -> (IMP, Signature) {
        try closureIMP(selector, declared: types, returns: Int.returnEncoding, arguments: [Int.typeEncoding, Int.typeEncoding, Int.typeEncoding],
                       word: { o, _, a, b, c, _ in UInt64(UInt(bitPattern: try body(ObjectRef(word: o), Int(bitPattern: UInt(a)), Int(bitPattern: UInt(b)), Int(bitPattern: UInt(c))))) },
                       direct: DirectIntBody(box: IntMethodBody3(body), arity: 3, nonThrowing: nonThrowing)) { ret, args in
            try body(ObjectRef(argumentStorage: args[0]!), Int.argument(args, 2), Int.argument(args, 3), Int.argument(args, 4)).storeReturn(to: ret)
        }
    }

    func intIMP(_ selector: Selector, _ types: String?,
                _ body: @escaping @Sendable (ObjectRef, Int, Int, Int, Int) throws -> Int, nonThrowing: Bool = false) throws(RuntimeError) -> (IMP, Signature) {
        try closureIMP(selector, declared: types, returns: Int.returnEncoding, arguments: [Int.typeEncoding, Int.typeEncoding, Int.typeEncoding, Int.typeEncoding],
                       word: { o, _, a, b, c, d in UInt64(UInt(bitPattern: try body(ObjectRef(word: o), Int(bitPattern: UInt(a)), Int(bitPattern: UInt(b)), Int(bitPattern: UInt(c)), Int(bitPattern: UInt(d))))) },
                       direct: DirectIntBody(box: IntMethodBody4(body), arity: 4, nonThrowing: nonThrowing)) { ret, args in
            try body(ObjectRef(argumentStorage: args[0]!), Int.argument(args, 2), Int.argument(args, 3), Int.argument(args, 4), Int.argument(args, 5)).storeReturn(to: ret)
        }
    }
}
