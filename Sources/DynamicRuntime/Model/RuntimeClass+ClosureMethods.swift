import CDynamicRuntime

// Typed closure overloads for arities 0 to 4. A closure's parameter and return types imply its
// signature; `types`, when given, must agree with it, or the call throws signatureMismatch.
// A NULL for a parameter of a non-optional pointer-like type (`Selector`, `Object`, raw
// pointers) throws invalidArgument to the sender instead of reaching the closure.
// Written by scripts/generate-arity-ladders.py: edit its table and templates, not this file.

extension RuntimeClass {

    /// Adds a method implemented by a Swift closure (a trampoline slot, or a libffi closure).
    @inlinable @discardableResult
    public func addMethod<R: MessageReturn>(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef) throws -> R
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: R.returnEncoding, arguments: [], word: Self.wordBody(body)) { ret, args in
            try body(ObjectRef(argumentStorage: args[0]!)).storeReturn(to: ret, of: args)
        }
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure; returns the previous IMP, if any.
    @inlinable @discardableResult
    public func replaceMethod<R: MessageReturn>(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef) throws -> R
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: R.returnEncoding, arguments: [], word: Self.wordBody(body)) { ret, args in
            try body(ObjectRef(argumentStorage: args[0]!)).storeReturn(to: ret, of: args)
        }
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure (a trampoline slot, or a libffi closure).
    @inlinable @discardableResult
    public func addMethod(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef) throws -> Void
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: .void, arguments: [], word: Self.wordBody(body)) { _, args in
            try body(ObjectRef(argumentStorage: args[0]!))
        }
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure; returns the previous IMP, if any.
    @inlinable @discardableResult
    public func replaceMethod(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef) throws -> Void
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: .void, arguments: [], word: Self.wordBody(body)) { _, args in
            try body(ObjectRef(argumentStorage: args[0]!))
        }
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure (a trampoline slot, or a libffi closure).
    @inlinable @discardableResult
    public func addMethod<A: MessageArgument, R: MessageReturn>(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef, A) throws -> R
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: R.returnEncoding, arguments: [A.typeEncoding], word: Self.wordBody(body)) { ret, args in
            try body(ObjectRef(argumentStorage: args[0]!), A.argument(args, 2)).storeReturn(to: ret, of: args)
        }
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure; returns the previous IMP, if any.
    @inlinable @discardableResult
    public func replaceMethod<A: MessageArgument, R: MessageReturn>(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef, A) throws -> R
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: R.returnEncoding, arguments: [A.typeEncoding], word: Self.wordBody(body)) { ret, args in
            try body(ObjectRef(argumentStorage: args[0]!), A.argument(args, 2)).storeReturn(to: ret, of: args)
        }
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure (a trampoline slot, or a libffi closure).
    @inlinable @discardableResult
    public func addMethod<A: MessageArgument>(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef, A) throws -> Void
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: .void, arguments: [A.typeEncoding], word: Self.wordBody(body)) { _, args in
            try body(ObjectRef(argumentStorage: args[0]!), A.argument(args, 2))
        }
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure; returns the previous IMP, if any.
    @inlinable @discardableResult
    public func replaceMethod<A: MessageArgument>(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef, A) throws -> Void
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: .void, arguments: [A.typeEncoding], word: Self.wordBody(body)) { _, args in
            try body(ObjectRef(argumentStorage: args[0]!), A.argument(args, 2))
        }
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure (a trampoline slot, or a libffi closure).
    @inlinable @discardableResult
    public func addMethod<A: MessageArgument, B: MessageArgument, R: MessageReturn>(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef, A, B) throws -> R
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: R.returnEncoding, arguments: [A.typeEncoding, B.typeEncoding], word: Self.wordBody(body)) { ret, args in
            try body(ObjectRef(argumentStorage: args[0]!), A.argument(args, 2), B.argument(args, 3)).storeReturn(to: ret, of: args)
        }
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure; returns the previous IMP, if any.
    @inlinable @discardableResult
    public func replaceMethod<A: MessageArgument, B: MessageArgument, R: MessageReturn>(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef, A, B) throws -> R
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: R.returnEncoding, arguments: [A.typeEncoding, B.typeEncoding], word: Self.wordBody(body)) { ret, args in
            try body(ObjectRef(argumentStorage: args[0]!), A.argument(args, 2), B.argument(args, 3)).storeReturn(to: ret, of: args)
        }
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure (a trampoline slot, or a libffi closure).
    @inlinable @discardableResult
    public func addMethod<A: MessageArgument, B: MessageArgument>(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef, A, B) throws -> Void
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: .void, arguments: [A.typeEncoding, B.typeEncoding], word: Self.wordBody(body)) { _, args in
            try body(ObjectRef(argumentStorage: args[0]!), A.argument(args, 2), B.argument(args, 3))
        }
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure; returns the previous IMP, if any.
    @inlinable @discardableResult
    public func replaceMethod<A: MessageArgument, B: MessageArgument>(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef, A, B) throws -> Void
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: .void, arguments: [A.typeEncoding, B.typeEncoding], word: Self.wordBody(body)) { _, args in
            try body(ObjectRef(argumentStorage: args[0]!), A.argument(args, 2), B.argument(args, 3))
        }
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure (a trampoline slot, or a libffi closure).
    @inlinable @discardableResult
    public func addMethod<A: MessageArgument, B: MessageArgument, C: MessageArgument, R: MessageReturn>(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef, A, B, C) throws -> R
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: R.returnEncoding, arguments: [A.typeEncoding, B.typeEncoding, C.typeEncoding], word: Self.wordBody(body)) { ret, args in
            try body(ObjectRef(argumentStorage: args[0]!), A.argument(args, 2), B.argument(args, 3), C.argument(args, 4)).storeReturn(to: ret, of: args)
        }
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure; returns the previous IMP, if any.
    @inlinable @discardableResult
    public func replaceMethod<A: MessageArgument, B: MessageArgument, C: MessageArgument, R: MessageReturn>(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef, A, B, C) throws -> R
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: R.returnEncoding, arguments: [A.typeEncoding, B.typeEncoding, C.typeEncoding], word: Self.wordBody(body)) { ret, args in
            try body(ObjectRef(argumentStorage: args[0]!), A.argument(args, 2), B.argument(args, 3), C.argument(args, 4)).storeReturn(to: ret, of: args)
        }
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure (a trampoline slot, or a libffi closure).
    @inlinable @discardableResult
    public func addMethod<A: MessageArgument, B: MessageArgument, C: MessageArgument>(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef, A, B, C) throws -> Void
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: .void, arguments: [A.typeEncoding, B.typeEncoding, C.typeEncoding], word: Self.wordBody(body)) { _, args in
            try body(ObjectRef(argumentStorage: args[0]!), A.argument(args, 2), B.argument(args, 3), C.argument(args, 4))
        }
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure; returns the previous IMP, if any.
    @inlinable @discardableResult
    public func replaceMethod<A: MessageArgument, B: MessageArgument, C: MessageArgument>(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef, A, B, C) throws -> Void
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: .void, arguments: [A.typeEncoding, B.typeEncoding, C.typeEncoding], word: Self.wordBody(body)) { _, args in
            try body(ObjectRef(argumentStorage: args[0]!), A.argument(args, 2), B.argument(args, 3), C.argument(args, 4))
        }
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure (a trampoline slot, or a libffi closure).
    @inlinable @discardableResult
    public func addMethod<A: MessageArgument, B: MessageArgument, C: MessageArgument, D: MessageArgument, R: MessageReturn>(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef, A, B, C, D) throws -> R
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: R.returnEncoding, arguments: [A.typeEncoding, B.typeEncoding, C.typeEncoding, D.typeEncoding], word: Self.wordBody(body)) { ret, args in
            try body(ObjectRef(argumentStorage: args[0]!), A.argument(args, 2), B.argument(args, 3), C.argument(args, 4), D.argument(args, 5)).storeReturn(to: ret, of: args)
        }
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure; returns the previous IMP, if any.
    @inlinable @discardableResult
    public func replaceMethod<A: MessageArgument, B: MessageArgument, C: MessageArgument, D: MessageArgument, R: MessageReturn>(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef, A, B, C, D) throws -> R
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: R.returnEncoding, arguments: [A.typeEncoding, B.typeEncoding, C.typeEncoding, D.typeEncoding], word: Self.wordBody(body)) { ret, args in
            try body(ObjectRef(argumentStorage: args[0]!), A.argument(args, 2), B.argument(args, 3), C.argument(args, 4), D.argument(args, 5)).storeReturn(to: ret, of: args)
        }
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure (a trampoline slot, or a libffi closure).
    @inlinable @discardableResult
    public func addMethod<A: MessageArgument, B: MessageArgument, C: MessageArgument, D: MessageArgument>(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef, A, B, C, D) throws -> Void
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: .void, arguments: [A.typeEncoding, B.typeEncoding, C.typeEncoding, D.typeEncoding], word: Self.wordBody(body)) { _, args in
            try body(ObjectRef(argumentStorage: args[0]!), A.argument(args, 2), B.argument(args, 3), C.argument(args, 4), D.argument(args, 5))
        }
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure; returns the previous IMP, if any.
    @inlinable @discardableResult
    public func replaceMethod<A: MessageArgument, B: MessageArgument, C: MessageArgument, D: MessageArgument>(
        _ selector: Selector, types: String? = nil, _ body: @escaping @Sendable (ObjectRef, A, B, C, D) throws -> Void
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: .void, arguments: [A.typeEncoding, B.typeEncoding, C.typeEncoding, D.typeEncoding], word: Self.wordBody(body)) { _, args in
            try body(ObjectRef(argumentStorage: args[0]!), A.argument(args, 2), B.argument(args, 3), C.argument(args, 4), D.argument(args, 5))
        }
        return try install(selector, imp, sig, replacing: true).previous
    }
}

// The word body of each overload: nil where an argument or the return does not travel in one
// integer register.
extension RuntimeClass {

    @inlinable
    static func wordBody<R: MessageReturn>(
        _ body: @escaping (ObjectRef) throws -> R
    ) -> WordBody? {
        guard R.returnKind != .other else { return nil }
        return { o, _, _, _, _, _ in
            try body(ObjectRef(word: o)).returnWord
        }
    }

    @inlinable
    static func wordBody(
        _ body: @escaping (ObjectRef) throws -> Void
    ) -> WordBody? {
        return { o, _, _, _, _, _ in
            try body(ObjectRef(word: o))
            return 0
        }
    }

    @inlinable
    static func wordBody<A: MessageArgument, R: MessageReturn>(
        _ body: @escaping (ObjectRef, A) throws -> R
    ) -> WordBody? {
        guard A.passesInWord, R.returnKind != .other else { return nil }
        return { o, s, a, _, _, _ in
            try body(ObjectRef(word: o),
                     A.fromWord(a, receiver: o, selector: s, 2)).returnWord
        }
    }

    @inlinable
    static func wordBody<A: MessageArgument>(
        _ body: @escaping (ObjectRef, A) throws -> Void
    ) -> WordBody? {
        guard A.passesInWord else { return nil }
        return { o, s, a, _, _, _ in
            try body(ObjectRef(word: o),
                     A.fromWord(a, receiver: o, selector: s, 2))
            return 0
        }
    }

    @inlinable
    static func wordBody<A: MessageArgument, B: MessageArgument, R: MessageReturn>(
        _ body: @escaping (ObjectRef, A, B) throws -> R
    ) -> WordBody? {
        guard A.passesInWord, B.passesInWord, R.returnKind != .other else { return nil }
        return { o, s, a, b, _, _ in
            try body(ObjectRef(word: o),
                     A.fromWord(a, receiver: o, selector: s, 2),
                     B.fromWord(b, receiver: o, selector: s, 3)).returnWord
        }
    }

    @inlinable
    static func wordBody<A: MessageArgument, B: MessageArgument>(
        _ body: @escaping (ObjectRef, A, B) throws -> Void
    ) -> WordBody? {
        guard A.passesInWord, B.passesInWord else { return nil }
        return { o, s, a, b, _, _ in
            try body(ObjectRef(word: o),
                     A.fromWord(a, receiver: o, selector: s, 2),
                     B.fromWord(b, receiver: o, selector: s, 3))
            return 0
        }
    }

    @inlinable
    static func wordBody<A: MessageArgument, B: MessageArgument, C: MessageArgument, R: MessageReturn>(
        _ body: @escaping (ObjectRef, A, B, C) throws -> R
    ) -> WordBody? {
        guard A.passesInWord, B.passesInWord, C.passesInWord, R.returnKind != .other else { return nil }
        return { o, s, a, b, c, _ in
            try body(ObjectRef(word: o),
                     A.fromWord(a, receiver: o, selector: s, 2),
                     B.fromWord(b, receiver: o, selector: s, 3),
                     C.fromWord(c, receiver: o, selector: s, 4)).returnWord
        }
    }

    @inlinable
    static func wordBody<A: MessageArgument, B: MessageArgument, C: MessageArgument>(
        _ body: @escaping (ObjectRef, A, B, C) throws -> Void
    ) -> WordBody? {
        guard A.passesInWord, B.passesInWord, C.passesInWord else { return nil }
        return { o, s, a, b, c, _ in
            try body(ObjectRef(word: o),
                     A.fromWord(a, receiver: o, selector: s, 2),
                     B.fromWord(b, receiver: o, selector: s, 3),
                     C.fromWord(c, receiver: o, selector: s, 4))
            return 0
        }
    }

    @inlinable
    static func wordBody<A: MessageArgument, B: MessageArgument, C: MessageArgument, D: MessageArgument, R: MessageReturn>(
        _ body: @escaping (ObjectRef, A, B, C, D) throws -> R
    ) -> WordBody? {
        guard A.passesInWord, B.passesInWord, C.passesInWord, D.passesInWord, R.returnKind != .other else { return nil }
        return { o, s, a, b, c, d in
            try body(ObjectRef(word: o),
                     A.fromWord(a, receiver: o, selector: s, 2),
                     B.fromWord(b, receiver: o, selector: s, 3),
                     C.fromWord(c, receiver: o, selector: s, 4),
                     D.fromWord(d, receiver: o, selector: s, 5)).returnWord
        }
    }

    @inlinable
    static func wordBody<A: MessageArgument, B: MessageArgument, C: MessageArgument, D: MessageArgument>(
        _ body: @escaping (ObjectRef, A, B, C, D) throws -> Void
    ) -> WordBody? {
        guard A.passesInWord, B.passesInWord, C.passesInWord, D.passesInWord else { return nil }
        return { o, s, a, b, c, d in
            try body(ObjectRef(word: o),
                     A.fromWord(a, receiver: o, selector: s, 2),
                     B.fromWord(b, receiver: o, selector: s, 3),
                     C.fromWord(c, receiver: o, selector: s, 4),
                     D.fromWord(d, receiver: o, selector: s, 5))
            return 0
        }
    }
}
