import CShims
import Glibc
import Synchronization

/// Per-object data that most objects never need: created on first use, freed at dealloc.
final class ObjectSideTable: @unchecked Sendable {
    enum Value {
        case swift(Any)
        /// Retained by the table (retain and copy policies); released when reset or at dealloc.
        case object(sf_id)
        /// The assign policy: neither retained nor released, and left dangling if it dies first.
        case unretained(sf_id)

        /// The object, whatever the policy.
        var object: sf_id? {
            switch self {
            case let .object(o), let .unretained(o): o
            case .swift: nil
            }
        }
    }

    /// One word, not a `RuntimeLock` (a heap object and a heap pthread mutex): every object
    /// with a hook of its own has a side table, so its size counts. Held only for a few
    /// dictionary or array operations, and rarely contended: a waiter yields.
    private let lockWord = Atomic<UInt32>(0)
    private var deallocating = false
    private var associations: [UnsafeRawPointer: Value] = [:]
    private var observers: [(id: UInt64, run: (ObjectRef) -> Void)] = []
    /// Observer ids, shared by all tables (a word less per table).
    private static let nextToken = Atomic<UInt64>(1)
    /// The object's own hooks: the head of its list of chains, one per selector, retained (0:
    /// none). Written with the runtime lock held; read by sends without it, in a read section.
    private let hookBits = Atomic<UInt>(0)
    /// The object while it has hooks of its own (runtime lock held): cleared when the last
    /// goes and at deallocation, so a token never reaches a dead object.
    var hookedObject: sf_id?

    /// The head of the object's hook list (in a read section, or with the runtime lock held).
    var hooks: HookChain? {
        let bits = hookBits.load(ordering: .acquiring)
        return bits == 0 ? nil : Unmanaged<HookChain>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).takeUnretainedValue()
    }

    /// `hooks` without a retain (in a read section).
    var hooksRef: Unmanaged<HookChain>? {
        let bits = hookBits.load(ordering: .acquiring)
        return bits == 0 ? nil : Unmanaged<HookChain>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!)
    }

    /// Publishes a new list; the old one is freed after a grace period (runtime lock held).
    func publishHooks(_ head: HookChain?) {
        let bits = head.map { UInt(bitPattern: Unmanaged.passRetained($0).toOpaque()) } ?? 0
        let old = hookBits.exchange(bits, ordering: .acquiringAndReleasing)
        if let old = UnsafeMutableRawPointer(bitPattern: old) { Runtime.state.retire(releasing: old) }
    }

    deinit {
        if let bits = UnsafeMutableRawPointer(bitPattern: hookBits.load(ordering: .acquiring)) {
            Unmanaged<HookChain>.fromOpaque(bits).release()
        }
    }

    private func withLock<R>(_ body: () throws -> R) rethrows -> R {
        while !lockWord.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged { sched_yield() }
        defer { lockWord.store(0, ordering: .releasing) }
        return try body()
    }

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
        let old: Value? = withLock {
            if let value { return associations.updateValue(value, forKey: key) }
            return associations.removeValue(forKey: key)
        }
        // Released outside the lock: a release may deallocate and re-enter.
        if case let .object(o)? = old { sf_release_inline(o) }
    }

    func get(_ key: UnsafeRawPointer) -> Value? {
        withLock { associations[key] }
    }

    func getRetainedObject(_ key: UnsafeRawPointer) -> sf_id? {
        withLock {
            guard let o = associations[key]?.object else { return nil }
            sf_retain_inline(o)
            return o
        }
    }

    func addObserver(_ run: @escaping (ObjectRef) -> Void) -> DeallocObserverToken? {
        withLock {
            guard !deallocating else { return nil }
            let id = Self.nextToken.add(1, ordering: .relaxed).oldValue
            observers.append((id, run))
            return DeallocObserverToken(id: id)
        }
    }

    func removeObserver(_ token: DeallocObserverToken) -> Bool {
        withLock {
            guard let i = observers.firstIndex(where: { $0.id == token.id }) else { return false }
            observers.remove(at: i)
            return true
        }
    }

    func runDeallocObservers(_ obj: ObjectRef) {
        let list = withLock {
            deallocating = true
            let l = observers
            observers = []
            return l
        }
        for o in list { o.run(obj) }
    }

    func releaseAssociations() {
        let all = withLock {
            let a = associations
            associations = [:]
            return a
        }
        for case let .object(o) in all.values { sf_release_inline(o) }
    }
}
