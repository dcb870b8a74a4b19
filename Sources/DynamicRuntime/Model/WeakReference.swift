import CDynamicRuntime

/// A zeroing weak reference: `object` reads nil once the object has been deallocated.
///
/// The reference can be re-pointed in place (`objc_storeWeak`), copied (`objc_copyWeak`) and
/// moved (`objc_moveWeak`); every read retains a live object or returns nil, even while
/// another thread releases the object's last strong reference.
///
/// ```swift
/// let weak = WeakReference(obj)
/// weak.object = other           // re-pointed: the table forgets obj for this reference
/// let copy = WeakReference(copying: weak)
/// ```
public final class WeakReference: @unchecked Sendable {
    private let slot: UnsafeMutablePointer<sf_id?>

    private init(slot: Void) {
        self.slot = .allocate(capacity: 1)
        self.slot.initialize(to: nil)
    }

    /// Refers weakly to `receiver`'s object.
    ///
    /// - Throws: `invalidArgument` for a small (tagged) object, which is never deallocated and
    ///   so has nothing a weak reference could observe.
    public convenience init(_ receiver: some MessageReceiver) throws(RuntimeError) {
        let raw = receiver.receiver.raw
        if let raw, sf_object_isTagged(raw) { throw .taggedWeak(raw) }
        self.init(slot: ())
        WeakTable.shared.register(slot, raw)
    }

    /// The package's own weak references (rule targets, weak proxies): a small object is held
    /// as it is, since it is never deallocated.
    package convenience init(holding receiver: some MessageReceiver) {
        self.init(slot: ())
        WeakTable.shared.register(slot, receiver.receiver.raw)
    }

    /// A reference to nothing yet; `store(_:)` or `object` points it at an object.
    public convenience init() {
        self.init(slot: ())
    }

    /// A second reference to what `other` refers to now (`objc_copyWeak`).
    public convenience init(copying other: WeakReference) {
        self.init(slot: ())
        WeakTable.shared.copy(to: slot, from: other.slot)
    }

    /// Takes over what `other` refers to, leaving `other` referring to nothing (`objc_moveWeak`).
    public convenience init(moving other: WeakReference) {
        self.init(slot: ())
        WeakTable.shared.move(to: slot, from: other.slot)
    }

    deinit {
        WeakTable.shared.unregister(slot)
        slot.deallocate()
    }

    /// A strong handle to the object, or nil once it has been deallocated. Setting it
    /// re-points the reference in place (`objc_storeWeak`); nil, or a small (tagged) object,
    /// which `store(_:)` refuses, makes it refer to nothing.
    public var object: Object? {
        get { WeakTable.shared.loadRetained(slot).map { Object(adopting: $0) } }
        set { WeakTable.shared.store(slot, newValue?.raw) }
    }

    /// Re-points the reference at `receiver`'s object (`objc_storeWeak`).
    ///
    /// - Returns: false when the object is already being deallocated: the reference then
    ///   refers to nothing, as objc4 stores nil for a deallocating object.
    /// - Throws: `invalidArgument` for a small (tagged) object; the reference is left as it was.
    @discardableResult
    public func store(_ receiver: some MessageReceiver) throws(RuntimeError) -> Bool {
        let raw = receiver.receiver.raw
        if let raw, sf_object_isTagged(raw) { throw .taggedWeak(raw) }
        return WeakTable.shared.store(slot, raw) == raw
    }
}
