import CShims

// Typed closure overloads for arities 0 to 4. A closure's parameter and return types imply its
// signature; `types`, when given, must agree with it, or the call throws signatureMismatch.
// Generated shape: keep the overloads uniform.

extension RuntimeClass {

    /// Adds a method implemented by a Swift closure (a libffi closure IMP).
    @discardableResult
    public func addMethod<R: MessageReturn>(
        _ selector: Selector, types: String? = nil, _ body: @escaping (ObjectRef) -> R
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: R.returnEncoding, arguments: []) { ret, args in
            body(ObjectRef(argumentStorage: args[0]!)).storeReturn(to: ret)
        }
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure; returns the previous IMP, if any.
    @discardableResult
    public func replaceMethod<R: MessageReturn>(
        _ selector: Selector, types: String? = nil, _ body: @escaping (ObjectRef) -> R
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: R.returnEncoding, arguments: []) { ret, args in
            body(ObjectRef(argumentStorage: args[0]!)).storeReturn(to: ret)
        }
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure (a libffi closure IMP).
    @discardableResult
    public func addMethod(
        _ selector: Selector, types: String? = nil, _ body: @escaping (ObjectRef) -> Void
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: .void, arguments: []) { _, args in
            body(ObjectRef(argumentStorage: args[0]!))
        }
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure; returns the previous IMP, if any.
    @discardableResult
    public func replaceMethod(
        _ selector: Selector, types: String? = nil, _ body: @escaping (ObjectRef) -> Void
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: .void, arguments: []) { _, args in
            body(ObjectRef(argumentStorage: args[0]!))
        }
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure (a libffi closure IMP).
    @discardableResult
    public func addMethod<A: MessageArgument, R: MessageReturn>(
        _ selector: Selector, types: String? = nil, _ body: @escaping (ObjectRef, A) -> R
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: R.returnEncoding, arguments: [A.typeEncoding]) { ret, args in
            body(ObjectRef(argumentStorage: args[0]!), A(argumentStorage: args[2]!)).storeReturn(to: ret)
        }
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure; returns the previous IMP, if any.
    @discardableResult
    public func replaceMethod<A: MessageArgument, R: MessageReturn>(
        _ selector: Selector, types: String? = nil, _ body: @escaping (ObjectRef, A) -> R
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: R.returnEncoding, arguments: [A.typeEncoding]) { ret, args in
            body(ObjectRef(argumentStorage: args[0]!), A(argumentStorage: args[2]!)).storeReturn(to: ret)
        }
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure (a libffi closure IMP).
    @discardableResult
    public func addMethod<A: MessageArgument>(
        _ selector: Selector, types: String? = nil, _ body: @escaping (ObjectRef, A) -> Void
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: .void, arguments: [A.typeEncoding]) { _, args in
            body(ObjectRef(argumentStorage: args[0]!), A(argumentStorage: args[2]!))
        }
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure; returns the previous IMP, if any.
    @discardableResult
    public func replaceMethod<A: MessageArgument>(
        _ selector: Selector, types: String? = nil, _ body: @escaping (ObjectRef, A) -> Void
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: .void, arguments: [A.typeEncoding]) { _, args in
            body(ObjectRef(argumentStorage: args[0]!), A(argumentStorage: args[2]!))
        }
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure (a libffi closure IMP).
    @discardableResult
    public func addMethod<A: MessageArgument, B: MessageArgument, R: MessageReturn>(
        _ selector: Selector, types: String? = nil, _ body: @escaping (ObjectRef, A, B) -> R
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: R.returnEncoding, arguments: [A.typeEncoding, B.typeEncoding]) { ret, args in
            body(ObjectRef(argumentStorage: args[0]!), A(argumentStorage: args[2]!), B(argumentStorage: args[3]!)).storeReturn(to: ret)
        }
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure; returns the previous IMP, if any.
    @discardableResult
    public func replaceMethod<A: MessageArgument, B: MessageArgument, R: MessageReturn>(
        _ selector: Selector, types: String? = nil, _ body: @escaping (ObjectRef, A, B) -> R
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: R.returnEncoding, arguments: [A.typeEncoding, B.typeEncoding]) { ret, args in
            body(ObjectRef(argumentStorage: args[0]!), A(argumentStorage: args[2]!), B(argumentStorage: args[3]!)).storeReturn(to: ret)
        }
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure (a libffi closure IMP).
    @discardableResult
    public func addMethod<A: MessageArgument, B: MessageArgument>(
        _ selector: Selector, types: String? = nil, _ body: @escaping (ObjectRef, A, B) -> Void
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: .void, arguments: [A.typeEncoding, B.typeEncoding]) { _, args in
            body(ObjectRef(argumentStorage: args[0]!), A(argumentStorage: args[2]!), B(argumentStorage: args[3]!))
        }
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure; returns the previous IMP, if any.
    @discardableResult
    public func replaceMethod<A: MessageArgument, B: MessageArgument>(
        _ selector: Selector, types: String? = nil, _ body: @escaping (ObjectRef, A, B) -> Void
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: .void, arguments: [A.typeEncoding, B.typeEncoding]) { _, args in
            body(ObjectRef(argumentStorage: args[0]!), A(argumentStorage: args[2]!), B(argumentStorage: args[3]!))
        }
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure (a libffi closure IMP).
    @discardableResult
    public func addMethod<A: MessageArgument, B: MessageArgument, C: MessageArgument, R: MessageReturn>(
        _ selector: Selector, types: String? = nil, _ body: @escaping (ObjectRef, A, B, C) -> R
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: R.returnEncoding, arguments: [A.typeEncoding, B.typeEncoding, C.typeEncoding]) { ret, args in
            body(ObjectRef(argumentStorage: args[0]!), A(argumentStorage: args[2]!), B(argumentStorage: args[3]!), C(argumentStorage: args[4]!)).storeReturn(to: ret)
        }
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure; returns the previous IMP, if any.
    @discardableResult
    public func replaceMethod<A: MessageArgument, B: MessageArgument, C: MessageArgument, R: MessageReturn>(
        _ selector: Selector, types: String? = nil, _ body: @escaping (ObjectRef, A, B, C) -> R
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: R.returnEncoding, arguments: [A.typeEncoding, B.typeEncoding, C.typeEncoding]) { ret, args in
            body(ObjectRef(argumentStorage: args[0]!), A(argumentStorage: args[2]!), B(argumentStorage: args[3]!), C(argumentStorage: args[4]!)).storeReturn(to: ret)
        }
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure (a libffi closure IMP).
    @discardableResult
    public func addMethod<A: MessageArgument, B: MessageArgument, C: MessageArgument>(
        _ selector: Selector, types: String? = nil, _ body: @escaping (ObjectRef, A, B, C) -> Void
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: .void, arguments: [A.typeEncoding, B.typeEncoding, C.typeEncoding]) { _, args in
            body(ObjectRef(argumentStorage: args[0]!), A(argumentStorage: args[2]!), B(argumentStorage: args[3]!), C(argumentStorage: args[4]!))
        }
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure; returns the previous IMP, if any.
    @discardableResult
    public func replaceMethod<A: MessageArgument, B: MessageArgument, C: MessageArgument>(
        _ selector: Selector, types: String? = nil, _ body: @escaping (ObjectRef, A, B, C) -> Void
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: .void, arguments: [A.typeEncoding, B.typeEncoding, C.typeEncoding]) { _, args in
            body(ObjectRef(argumentStorage: args[0]!), A(argumentStorage: args[2]!), B(argumentStorage: args[3]!), C(argumentStorage: args[4]!))
        }
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure (a libffi closure IMP).
    @discardableResult
    public func addMethod<A: MessageArgument, B: MessageArgument, C: MessageArgument, D: MessageArgument, R: MessageReturn>(
        _ selector: Selector, types: String? = nil, _ body: @escaping (ObjectRef, A, B, C, D) -> R
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: R.returnEncoding, arguments: [A.typeEncoding, B.typeEncoding, C.typeEncoding, D.typeEncoding]) { ret, args in
            body(ObjectRef(argumentStorage: args[0]!), A(argumentStorage: args[2]!), B(argumentStorage: args[3]!), C(argumentStorage: args[4]!), D(argumentStorage: args[5]!)).storeReturn(to: ret)
        }
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure; returns the previous IMP, if any.
    @discardableResult
    public func replaceMethod<A: MessageArgument, B: MessageArgument, C: MessageArgument, D: MessageArgument, R: MessageReturn>(
        _ selector: Selector, types: String? = nil, _ body: @escaping (ObjectRef, A, B, C, D) -> R
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: R.returnEncoding, arguments: [A.typeEncoding, B.typeEncoding, C.typeEncoding, D.typeEncoding]) { ret, args in
            body(ObjectRef(argumentStorage: args[0]!), A(argumentStorage: args[2]!), B(argumentStorage: args[3]!), C(argumentStorage: args[4]!), D(argumentStorage: args[5]!)).storeReturn(to: ret)
        }
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure (a libffi closure IMP).
    @discardableResult
    public func addMethod<A: MessageArgument, B: MessageArgument, C: MessageArgument, D: MessageArgument>(
        _ selector: Selector, types: String? = nil, _ body: @escaping (ObjectRef, A, B, C, D) -> Void
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: .void, arguments: [A.typeEncoding, B.typeEncoding, C.typeEncoding, D.typeEncoding]) { _, args in
            body(ObjectRef(argumentStorage: args[0]!), A(argumentStorage: args[2]!), B(argumentStorage: args[3]!), C(argumentStorage: args[4]!), D(argumentStorage: args[5]!))
        }
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure; returns the previous IMP, if any.
    @discardableResult
    public func replaceMethod<A: MessageArgument, B: MessageArgument, C: MessageArgument, D: MessageArgument>(
        _ selector: Selector, types: String? = nil, _ body: @escaping (ObjectRef, A, B, C, D) -> Void
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try closureIMP(selector, declared: types, returns: .void, arguments: [A.typeEncoding, B.typeEncoding, C.typeEncoding, D.typeEncoding]) { _, args in
            body(ObjectRef(argumentStorage: args[0]!), A(argumentStorage: args[2]!), B(argumentStorage: args[3]!), C(argumentStorage: args[4]!), D(argumentStorage: args[5]!))
        }
        return try install(selector, imp, sig, replacing: true).previous
    }
}
