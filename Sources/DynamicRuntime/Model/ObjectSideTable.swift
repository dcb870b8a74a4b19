import CDynamicRuntime
import Glibc
import Synchronization

/// Per-object data that most objects never need: created on first use, and dropped again when
/// nothing needs it any more (the last hook, association or dealloc observer goes) or at
/// dealloc. See `ObjectSideTable+Lifetime.swift` for how readers survive the drop.
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

    // Under the table's striped lock (`withLock`): every object with a hook of its own has a
    // table, so a lock of its own would count.
    private var deallocating = false
    /// Set when the table is dropped from its object: it stays empty, and additions go to a new one.
    var detached = false
    private var associations: [UnsafeRawPointer: Value] = [:]
    private var observers: [(id: UInt64, run: (ObjectRef) -> Void)] = []
    /// Observer ids, shared by all tables (a word less per table).
    private static let nextToken = Atomic<UInt64>(1)
    /// The object's own hooks: the head of its list of chains, one per selector, retained (0:
    /// none). Written with the runtime lock held; read by sends without it, in a read section.
    private let hookList = PublishedObject<HookChain>()
    /// The first-instead box (`InsteadBody`, unretained: its chain keeps it) of the list's head
    /// chain when that chain is instead-only, else 0: a hidden entry's call finds the
    /// receiver's own hook of the selector most recently changed in one load from here.
    let headInstead = AtomicObjectWord<InsteadBody>()
    /// The object while it has hooks of its own (runtime lock held): cleared when the last
    /// goes and at deallocation, so a token never reaches a dead object.
    var hookedObject: sf_id?

    /// The head of the object's hook list (in a read section, or with the runtime lock held).
    var hooks: HookChain? { hookList.object }

    /// `hooks` without a retain (in a read section).
    var hooksRef: ObjectWord<HookChain>? { hookList.load() }

    /// Whether the object has hooks of its own in this table.
    var hasHooks: Bool { !hookList.isNil }

    /// Publishes a new list; the old one is freed after a grace period (runtime lock held).
    func publishHooks(_ head: HookChain?) {
        hookList.publish(head)
        headInstead.store(head?.withUnsafeMutablePointerToHeader { $0.pointee.firstInstead })
    }

    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        let me = UnsafeRawPointer(ObjectWord(unretained: self).pointer)
        sf_side_lock(me)
        defer { sf_side_unlock(me) }
        return try body()
    }

    /// Whether nothing but hooks could need the table: no association, no observer, and not
    /// deallocating (under the lock).
    var holdsNothing: Bool { !deallocating && associations.isEmpty && observers.isEmpty }

    /// Stores (or, for nil, removes) the value under `key`, returning the value it displaced
    /// for the caller to release last (`releaseLast`); `.detached`, storing nothing, if the
    /// table was dropped meanwhile.
    func exchange(_ value: Value?, for key: UnsafeRawPointer) -> Added<Value?> {
        withLock {
            guard let value else { return .done(associations.removeValue(forKey: key)) }
            if detached { return .detached }
            return .done(associations.updateValue(value, forKey: key))
        }
    }

    /// Releases what was taken out of an object. Called after the last access to that object:
    /// the value may be its last owner, so the release may free it (objc4 releases an old
    /// association last for the same reason). Outside every lock, as it may re-enter.
    static func releaseLast(_ value: consuming Value?) {
        // A Swift value is destroyed here too, at the end of this call.
        if case let .object(o)? = consume value { sf_release_inline(o) }
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

    /// What adding to a table did.
    enum Added<T> {
        case done(T)
        /// The table was dropped meanwhile: retry on the object's current table.
        case detached
    }

    /// Adds a dealloc observer; `.done(nil)` if the object is deallocating.
    func addObserver(_ run: @escaping (ObjectRef) -> Void) -> Added<DeallocObserverToken?> {
        withLock {
            if detached { return .detached }
            guard !deallocating else { return .done(nil) }
            let id = Self.nextToken.add(1, ordering: .relaxed).oldValue
            observers.append((id, run))
            return .done(DeallocObserverToken(id: id))
        }
    }

    /// Removes the observer `token` names and returns its closure, for the caller to drop
    /// after its last access to the object (the closure's captures may own it).
    func removeObserver(_ token: DeallocObserverToken) -> ((ObjectRef) -> Void)? {
        withLock { () -> ((ObjectRef) -> Void)? in
            guard let i = observers.firstIndex(where: { $0.id == token.id }) else { return nil }
            return observers.remove(at: i).run
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

    /// Takes every association out of the table; the caller releases them with `releaseLast`
    /// after its last access to the object.
    func takeAssociations() -> [Value] {
        withLock {
            let a = associations
            associations = [:]
            return Array(a.values)
        }
    }

    /// Releases every association (at deallocation, and for a class's own table).
    func releaseAssociations() {
        for v in takeAssociations() { Self.releaseLast(v) }
    }
}
