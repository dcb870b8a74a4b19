import CDynamicRuntime

// Closure methods of any number of arguments. The fixed-arity closure methods
// (RuntimeClass+ClosureMethods.swift and the `Int` ones) are preferred by overload ranking
// where they apply: they keep a register path (word or `Int` body); a method of this family is
// entered through the slot's spill entry and reads its arguments from the frame.

extension RuntimeClass {
    /// Adds a method of any number of arguments implemented by a Swift closure:
    /// `try cls.addMethod("frame:x:y:w:h:depth:") { (me: ObjectRef, a: Int, b: Int, c: Int, d: Int, e: Int, f: Int) in a + f }`.
    @inlinable @discardableResult
    public func addMethod<each A: MessageArgument, R: MessageReturn>(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef, repeat each A) throws -> R
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try packIMP(selector, types, body)
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method of any number of arguments with a Swift closure; returns the
    /// previous IMP, if any.
    @inlinable @discardableResult
    public func replaceMethod<each A: MessageArgument, R: MessageReturn>(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef, repeat each A) throws -> R
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try packIMP(selector, types, body)
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a void method of any number of arguments implemented by a Swift closure.
    @inlinable @discardableResult
    public func addMethod<each A: MessageArgument>(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef, repeat each A) throws -> Void
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try packIMP(selector, types) { (me: ObjectRef, args: repeat each A) throws -> NoReturn in
            try body(me, repeat each args)
            return NoReturn()
        }
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a void method of any number of arguments with a Swift closure;
    /// returns the previous IMP, if any.
    @inlinable @discardableResult
    public func replaceMethod<each A: MessageArgument>(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef, repeat each A) throws -> Void
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try packIMP(selector, types) { (me: ObjectRef, args: repeat each A) throws -> NoReturn in
            try body(me, repeat each args)
            return NoReturn()
        }
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// The closure IMP of a pack-typed body: the signature its types imply, and a body that
    /// reads each argument from the frame.
    @inlinable
    func packIMP<each A: MessageArgument, R: MessageReturn>(
        _ selector: Selector, _ types: String?, _ body: @escaping @Sendable (ObjectRef, repeat each A) throws -> R
    ) throws(RuntimeError) -> (IMP, Signature) {
        var arguments: [TypeEncoding] = []
        for type in repeat (each A).self { arguments.append(type.typeEncoding) }
        return try closureIMP(selector, declared: types, returns: R.returnEncoding, arguments: arguments) { ret, args in
            var index = 2
            try body(ObjectRef(argumentStorage: args[0]!), repeat Self.nextArgument((each A).self, args, &index))
                .storeReturn(to: ret, of: args)
        }
    }

    /// The argument at `index` of the frame `args`, as `T`; moves `index` on.
    @inlinable
    static func nextArgument<T: MessageArgument>(
        _: T.Type, _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ index: inout Int
    ) throws(RuntimeError) -> T {
        defer { index += 1 }
        return try T.argument(args, index)
    }
}
