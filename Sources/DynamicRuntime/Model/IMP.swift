import CDynamicRuntime
import Synchronization

/// A method implementation: a C function pointer to cast and call with (receiver, selector,
/// arguments…). When the IMP is a trampoline or libffi closure over a Swift closure, the value keeps that
/// closure alive, so an IMP returned by `replaceMethod` stays callable for as long as it is held.
public struct IMP: Hashable, @unchecked Sendable, CustomStringConvertible {
    /// The entry point.
    public let pointer: sf_imp
    let owner: ClosureIMP?

    /// Wraps a C function. The caller guarantees it matches the method's signature.
    public init(_ pointer: sf_imp) {
        self.pointer = pointer
        self.owner = nil
    }

    /// Wraps a C function given as a raw address (e.g. from `dlsym`).
    public init?(address: UnsafeRawPointer?) {
        guard let address else { return nil }
        self.init(CFunction.at(address, as: sf_imp.self))
    }

    init(pointer: sf_imp, owner: ClosureIMP?) {
        self.pointer = pointer
        self.owner = owner
    }

    /// The entry point as a raw address.
    public var address: UnsafeRawPointer { CFunction.address(of: pointer) }

    /// Whether this IMP runs a Swift closure (a trampoline or libffi closure made by the runtime).
    public var isClosure: Bool { owner != nil }

    /// Whether the two are the same (identity, not contents).
    public static func == (a: IMP, b: IMP) -> Bool { a.address == b.address }
    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(address) }
    /// A readable form, for logs and test failures.
    public var description: String { "IMP(\(address))" }
}
