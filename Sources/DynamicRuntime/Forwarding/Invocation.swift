import CShims
import Glibc

/// A message as data: target, selector, signature, argument storage and return storage.
///
/// Invocations are what `forwardInvocation:` receives and what hooks keep for replay. An
/// `Invocation` is a handle: copies share one record. Arguments live inline in the record's
/// single allocation. Call `retainArguments()` before keeping a record beyond the call that
/// made it: it retains the target and object arguments and copies C strings.
public struct Invocation: @unchecked Sendable, CustomStringConvertible {
    var storage: InvocationStorage

    /// A zeroed invocation for `signature`, to fill with `setArgument` and `invoke`.
    public init(signature: Signature, target: some MessageReceiver, selector: Selector) {
        storage = InvocationStorage.make(signature.storage)
        storage.header.target = target.receiver.raw
        storage.header.selector = selector.raw
        storage.writeTargetAndSelector()
    }

    init(storage: InvocationStorage) { self.storage = storage }

    /// Copies a live call's frame (receiver, selector, arguments) into a new record.
    static func capture(signature: SignatureStorage, arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Invocation {
        let s = InvocationStorage.make(signature)
        s.fill(from: arguments)
        return Invocation(storage: s)
    }

    /// Whether two handles refer to the same record.
    public static func === (a: Invocation, b: Invocation) -> Bool { a.storage === b.storage }

    /// Whether this handle is the only reference to its record (so it can be reused).
    public mutating func isUniquelyReferenced() -> Bool { isKnownUniquelyReferenced(&storage) }

    /// The method's types.
    public var signature: Signature { Signature(storage: storage.header.signature) }
    /// Arguments after the receiver and selector.
    public var argumentCount: Int { storage.header.signature.argumentTypes.count - 2 }
    /// Whether `retainArguments()` has been called.
    public var argumentsRetained: Bool { storage.header.argumentsRetained }

    /// The receiver. Setting it retains the new one when arguments are retained.
    public var target: ObjectRef {
        get { ObjectRef(storage.header.target) }
        nonmutating set { storage.setTarget(newValue.raw) }
    }

    /// The selector to send.
    public var selector: Selector {
        get { Selector(raw: storage.header.selector) }
        nonmutating set {
            storage.header.selector = newValue.raw
            storage.writeTargetAndSelector()
        }
    }

    private func check(_ index: Int, _ type: TypeEncoding) throws(RuntimeError) -> TypeEncoding {
        let types = storage.header.signature.argumentTypes
        guard index >= 0, index < types.count - 2 else {
            throw .invalidArgument(className: className, selector: selector.name,
                                   reason: "argument index \(index) out of range 0..<\(types.count - 2)")
        }
        let want = types[index + 2]
        guard want.isCompatible(with: type) else {
            throw .signatureMismatch(className: className, selector: selector.name, expected: storage.header.signature.encoding,
                                     actual: "argument \(index) read or written as '\(type.encoding)'")
        }
        return want
    }

    var className: String {
        guard let t = storage.header.target, let c = sf_object_getClass(t) else { return "nil" }
        return String(cString: sf_class_getName(c))
    }

    /// Argument `index` (0 is the first after the selector), checked against the signature.
    public func argument<T: MessageArgument>(at index: Int, as _: T.Type = T.self) throws(RuntimeError) -> T {
        _ = try check(index, T.typeEncoding)
        return T(argumentStorage: storage.argumentPointer(index + 2))
    }

    /// Sets argument `index`; retains objects and copies C strings if arguments are retained.
    public func setArgument<T: MessageArgument>(_ value: T, at index: Int) throws(RuntimeError) {
        let type = (value as? DynamicValue)?.typeEncoding ?? T.typeEncoding
        let want = try check(index, type)
        try (value as? DynamicValue)?.checkByteCount(size: storage.header.signature.argumentSizes[index + 2], of: want,
                                                     what: "argument \(index + 1)", className: className, selector: selector.name)
        storage.setArgument(index + 2, type: want) { value.storeArgument(to: $0) }
    }

    /// Argument `index` as a dynamic value.
    public func argumentValue(at index: Int) throws(RuntimeError) -> DynamicValue {
        let types = storage.header.signature.argumentTypes
        guard index >= 0, index < types.count - 2 else {
            throw .invalidArgument(className: className, selector: selector.name,
                                   reason: "argument index \(index) out of range 0..<\(types.count - 2)")
        }
        return DynamicValue.load(types[index + 2], from: storage.argumentPointer(index + 2), isReturn: false)
    }

    /// All arguments after the selector, as dynamic values.
    public var argumentValues: [DynamicValue] {
        (0..<argumentCount).map { (try? argumentValue(at: $0)) ?? .void }
    }

    /// The return value (objects come back retained for the caller).
    public func returnValue<T: MessageReturn>(as _: T.Type = T.self) throws(RuntimeError) -> T {
        let sig = storage.header.signature
        guard sig.returnType.isCompatible(with: T.returnEncoding) else {
            throw .signatureMismatch(className: className, selector: selector.name, expected: sig.encoding,
                                     actual: "return value read as '\(T.returnEncoding.encoding)'")
        }
        if sig.returnType == .object, let o = storage.returnPointer.load(as: sf_id?.self) { sf_retain_inline(o) }
        return T(returnStorage: storage.returnPointer)
    }

    /// The return value as a dynamic value.
    public var returnValue: DynamicValue {
        DynamicValue.load(storage.header.signature.returnType, from: storage.returnPointer, isReturn: false)
    }

    /// Sets the return value the caller will receive.
    public func setReturnValue<T: MessageReturn>(_ value: T) throws(RuntimeError) {
        let sig = storage.header.signature
        guard sig.returnType.isCompatible(with: T.returnEncoding) else {
            throw .signatureMismatch(className: className, selector: selector.name, expected: sig.encoding,
                                     actual: "return value set as '\(T.returnEncoding.encoding)'")
        }
        storage.clearReturn()
        value.storeReturn(to: storage.returnPointer)
        storage.header.ownsReturnObject = sig.returnType == .object
    }

    /// Retains the target and object arguments and copies C strings, so the record can outlive
    /// the call and be replayed later, on any thread. Idempotent.
    public func retainArguments() { storage.retainArguments() }

    /// The implementation a replay calls when the record came from a hook; nil means lookup.
    public var implementation: IMP? { storage.header.implementation }

    /// Sends the message to `target`: through `implementation` for a record a hook captured,
    /// otherwise with full lookup (and forwarding on a miss).
    public func invoke() throws(RuntimeError) {
        guard let target = storage.header.target else {
            storage.clearReturn()
            return
        }
        if let imp = storage.header.implementation {
            try invoke(using: imp)
            return
        }
        Runtime.discardStalePending()
        sf_rcu_enter()
        defer { sf_rcu_exit() }
        let cls = sf_object_isa(target)!
        storage.clearReturn()
        guard let method = sf_lookup_method(cls, storage.header.selector) else {
            try Forwarding.forward(storage, cls: cls)
            return
        }
        let sig = Signature(raw: sf_method_sig(method))
        guard sig == signature || sig.isCompatible(with: signature) else {
            throw .signatureMismatch(className: className, selector: selector.name, expected: sig.encoding, actual: signature.encoding)
        }
        storage.call(sf_method_imp(method)!)
        try Runtime.rethrowPending()
    }

    /// Sends the message to another receiver, with full lookup on it.
    public func invoke(target: some MessageReceiver) throws(RuntimeError) {
        self.target = target.receiver
        storage.header.implementation = nil
        try invoke()
    }

    /// Calls `imp` directly with the stored arguments (no lookup).
    public func invoke(using imp: IMP) throws(RuntimeError) {
        storage.clearReturn()
        Runtime.discardStalePending()
        withExtendedLifetime(imp) {
            storage.call(imp.pointer)
        }
        try Runtime.rethrowPending()
    }

    public var description: String {
        let args = argumentValues.map(\.description).joined(separator: ", ")
        return "<Invocation -[\(className) \(selector.name)](\(args)) \(signature.encoding)>"
    }
}
