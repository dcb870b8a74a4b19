import CShims

/// A key for associated values. Keys compare by identity: keep one per purpose, e.g. in a
/// `static let`.
public final class AssociationKey: Hashable, Sendable, CustomStringConvertible {
    /// A label for debugging; two keys with the same label are still different keys.
    public let label: String
    /// Makes a new, unique key.
    public init(_ label: String = "") { self.label = label }
    /// The key as the C API sees it.
    public var rawKey: UnsafeRawPointer { UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()) }
    public static func == (a: AssociationKey, b: AssociationKey) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    public var description: String { "AssociationKey(\(label))" }
}

/// A token for removing a dealloc observer.
public struct DeallocObserverToken: Hashable, Sendable {
    /// The token's number, unique per object.
    public let id: UInt64
}

/// Per-object data that most objects never need: created on first use, freed at dealloc.
final class ObjectSideTable: @unchecked Sendable {
    enum Value {
        case swift(Any)
        case object(sf_id)
    }

    private let lock = RuntimeLock()
    private var associations: [UnsafeRawPointer: Value] = [:]
    private var observers: [(id: UInt64, run: (ObjectRef) -> Void)] = []
    private var nextToken: UInt64 = 1
    private var deallocating = false

    static func of(_ obj: sf_id, create: Bool) -> ObjectSideTable? {
        if let side = sf_object_side(obj) {
            return Unmanaged<ObjectSideTable>.fromOpaque(side).takeUnretainedValue()
        }
        guard create else { return nil }
        let fresh = ObjectSideTable()
        let candidate = Unmanaged.passRetained(fresh).toOpaque()
        let installed = sf_object_install_side(obj, candidate)!
        if installed != candidate { Unmanaged<ObjectSideTable>.fromOpaque(candidate).release() }
        return Unmanaged<ObjectSideTable>.fromOpaque(installed).takeUnretainedValue()
    }

    func set(_ value: Value?, for key: UnsafeRawPointer) {
        let old: Value? = lock.withLock {
            if let value { return associations.updateValue(value, forKey: key) }
            return associations.removeValue(forKey: key)
        }
        // Released outside the lock: a release may deallocate and re-enter.
        if case let .object(o)? = old { sf_release_inline(o) }
    }

    func get(_ key: UnsafeRawPointer) -> Value? {
        lock.withLock { associations[key] }
    }

    func getRetainedObject(_ key: UnsafeRawPointer) -> sf_id? {
        lock.withLock {
            guard case let .object(o)? = associations[key] else { return nil }
            sf_retain_inline(o)
            return o
        }
    }

    func addObserver(_ run: @escaping (ObjectRef) -> Void) -> DeallocObserverToken? {
        lock.withLock {
            guard !deallocating else { return nil }
            let id = nextToken
            nextToken += 1
            observers.append((id, run))
            return DeallocObserverToken(id: id)
        }
    }

    func removeObserver(_ token: DeallocObserverToken) -> Bool {
        lock.withLock {
            guard let i = observers.firstIndex(where: { $0.id == token.id }) else { return false }
            observers.remove(at: i)
            return true
        }
    }

    func runDeallocObservers(_ obj: ObjectRef) {
        let list = lock.withLock {
            deallocating = true
            let l = observers
            observers = []
            return l
        }
        for o in list { o.run(obj) }
    }

    func releaseAssociations() {
        let all = lock.withLock {
            let a = associations
            associations = [:]
            return a
        }
        for case let .object(o) in all.values { sf_release_inline(o) }
    }
}

extension MessageReceiver {
    /// Associates a Swift value with the object until it is deallocated or the key is reset
    /// (nil removes it). Runtime objects passed as `Object` are retained.
    public func setAssociatedValue(_ value: Any?, for key: AssociationKey) {
        guard let raw = receiver.raw else { return }
        let table = ObjectSideTable.of(raw, create: true)!
        switch value {
        case nil:
            table.set(nil, for: key.rawKey)
        case let object as Object:
            sf_retain_inline(object.raw)
            table.set(.object(object.raw), for: key.rawKey)
        case let some?:
            table.set(.swift(some), for: key.rawKey)
        }
    }

    /// The value associated under `key`, if any.
    public func associatedValue(for key: AssociationKey) -> Any? {
        guard let raw = receiver.raw, let table = ObjectSideTable.of(raw, create: false) else { return nil }
        switch table.get(key.rawKey) {
        case nil: return nil
        case let .swift(v)?: return v
        case .object?:
            return table.getRetainedObject(key.rawKey).map { Object(adopting: $0) }
        }
    }

    /// Runs `body` once when the object is deallocated, before its ivars and associations go.
    /// Observers run in registration order. Returns nil if the object is already deallocating.
    ///
    /// The object passed to `body` must not be retained beyond the call.
    @discardableResult
    public func onDeallocate(_ body: @escaping (ObjectRef) -> Void) -> DeallocObserverToken? {
        guard let raw = receiver.raw else { return nil }
        if sf_object_flags(raw) & UInt32(SF_OBJ_IMMORTAL) != 0 { return nil }
        return ObjectSideTable.of(raw, create: true)!.addObserver(body)
    }

    /// Removes a dealloc observer; false if it already ran or was removed.
    @discardableResult
    public func removeDeallocObserver(_ token: DeallocObserverToken) -> Bool {
        guard let raw = receiver.raw, let table = ObjectSideTable.of(raw, create: false) else { return false }
        return table.removeObserver(token)
    }
}
