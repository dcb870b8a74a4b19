import CDynamicRuntime

/// How an associated object is held, as objc4's `objc_AssociationPolicy`. The raw values
/// are objc4's and the C API's (`SF_ASSOCIATION_*`).
///
/// At the owner's deallocation (after its dealloc observers ran) retained and copied values
/// are released and assigned ones left alone, as objc4 does. Every policy's set and get are
/// serialized by the owner's association lock, so the atomic policies cost what the
/// nonatomic ones do; the Swift getter and `sf_copyAssociatedObject` always return a
/// reference of their own, which is what objc4's atomic getter (retain and autorelease)
/// guarantees.
public enum AssociationPolicy: UInt, Sendable, CaseIterable {
    /// Not retained: the association dangles if the value dies first (objc4's `ASSIGN`).
    case assign = 0
    /// Retained, nonatomic.
    case retainNonatomic = 1
    /// Copied (the value's `copy`, `@@:`), nonatomic. A value whose class has no `copy` is
    /// treated as immutable: retained.
    case copyNonatomic = 3
    /// Retained, atomic (the policy `setAssociatedValue(_:for:)` uses).
    case retain = 0o1401
    /// Copied, atomic.
    case copy = 0o1403

    /// Whether the association holds a reference of its own.
    var retains: Bool { self != .assign }
    /// Whether the value is copied before it is stored.
    var copies: Bool { self == .copy || self == .copyNonatomic }
}

extension MessageReceiver {
    /// Associates a runtime object with this one under `policy` (nil removes the key).
    ///
    /// `.copy` and `.copyNonatomic` send `copy` to the value and keep the +1 result, unless the
    /// value's class does not implement `copy`: then it is retained (an immutable value).
    ///
    /// - Throws: `invalidArgument` for a nil receiver or one being deallocated (its
    ///   associations are being released, so a new one would leak); what the value's `copy`
    ///   throws (nothing is stored then).
    public func setAssociatedObject(_ value: ObjectRef, for key: AssociationKey,
                                    policy: AssociationPolicy) throws(RuntimeError) {
        try Associations.set(receiver.raw, key.rawKey, value.raw, policy)
    }

    /// Removes every association of the object (`objc_removeAssociatedObjects`), releasing
    /// the values it retained; assigned ones are only forgotten.
    public func removeAssociatedValues() {
        guard let raw = receiver.raw, let table = ObjectSideTable.of(raw, create: false) else { return }
        let values = table.takeAssociations()
        ObjectSideTable.dropIfUnused(raw, table)
        for v in values { ObjectSideTable.releaseLast(v) }
    }
}

/// The one implementation of policy-aware association, for Swift and C.
enum Associations {
    static func set(_ owner: sf_id?, _ key: UnsafeRawPointer, _ value: sf_id?,
                    _ policy: AssociationPolicy) throws(RuntimeError) {
        guard let owner else { throw .invalidArgument(.init(operation: "associate", expected: "an object", actual: "nil")) }
        if sf_object_isTagged(owner) { throw .taggedObject(owner, "associate") }
        if value != nil, ObjectLifecycle.isDeallocating(owner) {
            throw .invalidArgument(.init(className: CAPIValues.className(of: owner), operation: "associate an object", expected: "a live object", actual: "an object that is deallocating"))
        }
        guard let value else {
            ObjectSideTable.removeValue(for: key, of: owner)
            return
        }
        let stored: ObjectSideTable.Value
        if policy.copies, let cls = sf_object_getClass(value), sf_class_respondsToSelector(cls, Associations.copySelector.raw) {
            let copy: Object? = try ObjectRef(value).send(Associations.copySelector)
            guard let copy else { throw .invalidArgument(.init(className: CAPIValues.className(of: value), selector: "copy", expected: "a copy", actual: "nil")) }
            sf_retain_inline(copy.raw)
            stored = .object(copy.raw)
        } else if policy.retains {
            sf_retain_inline(value)
            stored = .object(value)
        } else {
            stored = .unretained(value)
        }
        ObjectSideTable.store(stored, for: key, of: owner)
    }

    static let copySelector = Selector("copy")
}
