import CDynamicRuntime

// The non-throwing `Int` overloads of `addMethod` and `replaceMethod` (arities 0 to 4). A
// closure that cannot throw prefers them to the throwing ones (RuntimeClass+IntClosureMethods
// .swift): its body is stored the same way, but C callers reach it through a thunk that only
// moves the arguments and the closure's context into Swift's registers — no read of the
// receiver's class before the call (an error's name) and no error check after it.
// Written by scripts/generate-arity-ladders.py: edit its table and templates, not this file.

extension RuntimeClass {
    /// Adds a method implemented by a Swift closure of `Int` arguments returning `Int` that
    /// does not throw.
    @discardableResult
    public func addMethod(
        _ selector: Selector, types: String? = nil, @IntMethodBody _ body: @escaping @Sendable (ObjectRef) -> Int
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try intIMP(selector, types, body, nonThrowing: true)
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure of `Int` arguments returning `Int` that
    /// does not throw; returns the previous IMP, if any.
    @discardableResult
    public func replaceMethod(
        _ selector: Selector, types: String? = nil, @IntMethodBody _ body: @escaping @Sendable (ObjectRef) -> Int
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try intIMP(selector, types, body, nonThrowing: true)
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure of `Int` arguments returning `Int` that
    /// does not throw.
    @discardableResult
    public func addMethod(
        _ selector: Selector, types: String? = nil, @IntMethodBody _ body: @escaping @Sendable (ObjectRef, Int) -> Int
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try intIMP(selector, types, body, nonThrowing: true)
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure of `Int` arguments returning `Int` that
    /// does not throw; returns the previous IMP, if any.
    @discardableResult
    public func replaceMethod(
        _ selector: Selector, types: String? = nil, @IntMethodBody _ body: @escaping @Sendable (ObjectRef, Int) -> Int
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try intIMP(selector, types, body, nonThrowing: true)
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure of `Int` arguments returning `Int` that
    /// does not throw.
    @discardableResult
    public func addMethod(
        _ selector: Selector, types: String? = nil, @IntMethodBody _ body: @escaping @Sendable (ObjectRef, Int, Int) -> Int
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try intIMP(selector, types, body, nonThrowing: true)
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure of `Int` arguments returning `Int` that
    /// does not throw; returns the previous IMP, if any.
    @discardableResult
    public func replaceMethod(
        _ selector: Selector, types: String? = nil, @IntMethodBody _ body: @escaping @Sendable (ObjectRef, Int, Int) -> Int
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try intIMP(selector, types, body, nonThrowing: true)
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure of `Int` arguments returning `Int` that
    /// does not throw.
    @discardableResult
    public func addMethod(
        _ selector: Selector, types: String? = nil, @IntMethodBody _ body: @escaping @Sendable (ObjectRef, Int, Int, Int) -> Int
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try intIMP(selector, types, body, nonThrowing: true)
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure of `Int` arguments returning `Int` that
    /// does not throw; returns the previous IMP, if any.
    @discardableResult
    public func replaceMethod(
        _ selector: Selector, types: String? = nil, @IntMethodBody _ body: @escaping @Sendable (ObjectRef, Int, Int, Int) -> Int
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try intIMP(selector, types, body, nonThrowing: true)
        return try install(selector, imp, sig, replacing: true).previous
    }

    /// Adds a method implemented by a Swift closure of `Int` arguments returning `Int` that
    /// does not throw.
    @discardableResult
    public func addMethod(
        _ selector: Selector, types: String? = nil, @IntMethodBody _ body: @escaping @Sendable (ObjectRef, Int, Int, Int, Int) -> Int
    ) throws(RuntimeError) -> Method {
        let (imp, sig) = try intIMP(selector, types, body, nonThrowing: true)
        return try install(selector, imp, sig, replacing: false).method
    }

    /// Replaces (or adds) a method with a Swift closure of `Int` arguments returning `Int` that
    /// does not throw; returns the previous IMP, if any.
    @discardableResult
    public func replaceMethod(
        _ selector: Selector, types: String? = nil, @IntMethodBody _ body: @escaping @Sendable (ObjectRef, Int, Int, Int, Int) -> Int
    ) throws(RuntimeError) -> IMP? {
        let (imp, sig) = try intIMP(selector, types, body, nonThrowing: true)
        return try install(selector, imp, sig, replacing: true).previous
    }
}
