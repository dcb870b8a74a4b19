import CShims

/// A zeroing weak reference: `object` reads nil once the object has been deallocated.
public final class WeakReference: @unchecked Sendable {
    private let slot: UnsafeMutablePointer<sf_id?>

    /// Refers weakly to `receiver`'s object.
    public init(_ receiver: some MessageReceiver) {
        slot = .allocate(capacity: 1)
        slot.initialize(to: nil)
        WeakTable.shared.register(slot, receiver.receiver.raw)
    }

    deinit {
        WeakTable.shared.unregister(slot)
        slot.deallocate()
    }

    /// A strong handle to the object, or nil once it has been deallocated.
    public var object: Object? {
        WeakTable.shared.loadRetained(slot).map { Object(adopting: $0) }
    }
}
