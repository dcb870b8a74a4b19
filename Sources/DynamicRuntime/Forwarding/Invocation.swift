import CDynamicRuntime
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
        storage.h.pointee.target = target.receiver.raw
        storage.h.pointee.selector = selector.raw
        storage.writeTargetAndSelector()
    }

    init(storage: InvocationStorage) { self.storage = storage }

    /// Copies a live call's frame (receiver, selector, arguments) into a new record.
    /// The signature's spare record (see `recycle`) is filled when there is one.
    static func capture(signature: SignatureStorage, arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Invocation {
        let invocation = take(signature)
        invocation.storage.fill(from: arguments)
        return invocation
    }

    /// Hands a forwarded call's record back to its signature for the next capture, when nothing
    /// kept it (`forwardInvocation:` let go of every copy): emptied first, so it holds no
    /// references or copies while it waits.
    static func recycle(_ invocation: inout Invocation) {
        guard isKnownUniquelyReferenced(&invocation.storage) else { return }
        invocation.emptyForReuse()
        let s = invocation.storage
        s.h.pointee.signature.spareRecord.exchange(ObjectWord(retaining: s))?.release()
    }

    /// Whether two handles refer to the same record.
    public static func === (a: Invocation, b: Invocation) -> Bool { a.storage === b.storage }

    /// Whether this handle is the only reference to its record (so it can be reused).
    public mutating func isUniquelyReferenced() -> Bool { isKnownUniquelyReferenced(&storage) }

    /// The method's types.
    public var signature: Signature { Signature(storage: storage.h.pointee.signature) }
    /// Arguments after the receiver and selector.
    public var argumentCount: Int { storage.h.pointee.signature.argumentTypes.count - 2 }
    /// Whether `retainArguments()` has been called.
    public var argumentsRetained: Bool { storage.h.pointee.argumentsRetained }

    /// The receiver. Setting it retains the new one when arguments are retained.
    public var target: ObjectRef {
        get { ObjectRef(storage.h.pointee.target) }
        nonmutating set { storage.setTarget(newValue.raw) }
    }

    /// The selector to send.
    public var selector: Selector {
        get { Selector(raw: storage.h.pointee.selector) }
        nonmutating set {
            storage.h.pointee.selector = newValue.raw
            storage.writeTargetAndSelector()
        }
    }

    var className: String {
        guard let t = storage.h.pointee.target, let c = sf_object_getClass(t) else { return "nil" }
        return Forwarding.visibleName(c)
    }

    /// Retains the target and object arguments and copies C strings, so the record can outlive
    /// the call and be replayed later, on any thread. Idempotent.
    public func retainArguments() { storage.retainArguments() }

    /// The implementation a replay calls when the record came from a hook; nil means lookup.
    public var implementation: IMP? { storage.h.pointee.implementation }

    /// Sends the message to `target`: through `implementation` for a record a hook captured,
    /// otherwise with full lookup (and forwarding on a miss).
    public func invoke() throws(RuntimeError) {
        guard let target = storage.h.pointee.target else {
            storage.clearReturn()
            return
        }
        if let imp = storage.h.pointee.implementation {
            try invoke(using: imp)
            return
        }
        Runtime.discardStalePending()
        sf_rcu_enter()
        defer { sf_rcu_exit() }
        let cls = sf_object_isa(target)!
        storage.clearReturn()
        let lent = sf_lent_mark()
        defer { storage.adoptLentReturn(since: lent) }
        guard let method = sf_lookup_method(cls, storage.h.pointee.selector) else {
            try Forwarding.forward(storage, cls: cls)
            return
        }
        // The same interned signature by address first: no Signature values built per replay.
        let found = sf_method_sig(method)!
        guard found == UnsafePointer(storage.h.pointee.signature.raw) || Signature(raw: found).isCompatible(with: signature) else {
            let sig = Signature(raw: found)
            throw .signatureMismatch(.init(className: className, selector: selector.name, expected: sig.encoding, actual: signature.encoding))
        }
        storage.call(sf_method_imp(method)!)
        try Runtime.rethrowPending()
    }

    /// Sends the message to another receiver, with full lookup on it.
    public func invoke(target: some MessageReceiver) throws(RuntimeError) {
        self.target = target.receiver
        storage.setImplementation(nil)
        try invoke()
    }

    /// Calls `imp` directly with the stored arguments (no lookup).
    public func invoke(using imp: IMP) throws(RuntimeError) {
        storage.clearReturn()
        Runtime.discardStalePending()
        let lent = sf_lent_mark()
        withExtendedLifetime(imp) {
            storage.call(imp.pointer)
        }
        storage.adoptLentReturn(since: lent)
        try Runtime.rethrowPending()
    }

    /// A readable form, for logs and test failures.
    public var description: String {
        let args = argumentValues.map(\.description).joined(separator: ", ")
        return "<Invocation -[\(className) \(selector.name)](\(args)) \(signature.encoding)>"
    }
}

extension Invocation: MessageFrame {
    /// The argument's place in the record.
    public func _argumentSlot(_ position: Int) -> UnsafeMutableRawPointer { storage.argumentPointer(position) }
    /// The record's return storage.
    public var _returnSlot: UnsafeMutableRawPointer { storage.returnPointer }
    /// The target's class and the selector.
    public var _errorContext: (className: String, selector: String) { (className, selector.name) }

    /// Writes through the record, which retains the value when its arguments are retained.
    public func _writeArgument(_ position: Int, type: TypeEncoding, _ write: (UnsafeMutableRawPointer) -> Void) {
        storage.setArgument(position, type: type, write)
    }

    /// Releases an object the record owns, then writes.
    public func _replaceReturn(_ write: (UnsafeMutableRawPointer) -> Void) {
        storage.clearReturn()
        let lent = sf_lent_mark()
        write(storage.returnPointer)
        storage.h.pointee.ownsReturnObject = storage.h.pointee.signature.returnsObject
        storage.adoptLentReturn(since: lent)
    }
}
