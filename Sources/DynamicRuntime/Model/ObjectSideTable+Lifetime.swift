import CDynamicRuntime
import Glibc

// A side table is dropped from its object as soon as nothing needs it (no hook of the
// object's own, no association, no dealloc observer): an object hooked and unhooked again
// costs what a plain one does. Sends read the table without a lock, so the drop is RCU:
// the object's pointer is cleared with the runtime lock held and the object's reference is
// released after a grace period; everyone else who finds the table through the object takes
// a reference of their own inside a read section. A dropped table is marked `detached` (it
// was empty and stays so): an addition that reaches it retries on the object's current one.
extension ObjectSideTable {
    /// `obj`'s table, a reference of the caller's own; made if `create` and there is none. It
    /// may be one being dropped (empty, refusing additions: see `add(to:_:)`). With the runtime
    /// lock held it never is.
    static func of(_ obj: sf_id, create: Bool) -> ObjectSideTable? {
        // A small object has no side pointer: callers that add refuse it first.
        if sf_object_isTagged(obj) { return nil }
        if sf_object_side(obj) == nil && !create { return nil }
        sf_rcu_enter()
        // Retained inside the section: the object's reference may be released once it ends.
        let held = sf_object_side(obj).map { ObjectWord<ObjectSideTable>($0).retain() }
        sf_rcu_exit()
        if let held { return held.take() }
        guard create else { return nil }
        let fresh = ObjectSideTable()
        let candidate = ObjectWord(retaining: fresh).pointer
        if sf_object_install_side(obj, candidate) == candidate { return fresh }
        ObjectWord<ObjectSideTable>(candidate).release()
        return of(obj, create: true)
    }

    /// Runs `body` on `obj`'s table (made if needed) until it reaches one that was not dropped
    /// meanwhile.
    static func add<R>(to obj: sf_id, _ body: (ObjectSideTable) -> Added<R>) -> R {
        while true {
            if case let .done(result) = body(of(obj, create: true)!) { return result }
            // The dropper holds the runtime lock for a few stores more.
            sched_yield()
        }
    }

    /// After a removal from `table`: drops it from `obj` if that left it unused. Call without
    /// the runtime lock.
    static func dropIfUnused(_ obj: sf_id, _ table: ObjectSideTable) {
        guard sf_object_flags(obj) & UInt32(SF_OBJ_IMMORTAL | SF_OBJ_DEALLOCATING) == 0, !table.hasHooks,
              table.withLock({ table.holdsNothing }) else { return }
        Runtime.state.lock.withLock { dropIfUnused(obj) }
        Runtime.state.collectGarbage()
    }

    /// Drops `obj`'s table if nothing needs it (runtime lock held; `obj` alive). Readers that
    /// found it keep it until they are done; the object's reference goes after a grace period.
    static func dropIfUnused(_ obj: sf_id) {
        Runtime.state.lock.assertHeld()
        // Class objects keep theirs (released with the class); a deallocating object releases
        // its own at the end of dealloc.
        guard sf_object_flags(obj) & UInt32(SF_OBJ_IMMORTAL | SF_OBJ_DEALLOCATING) == 0,
              let side = sf_object_side(obj) else { return }
        let word = ObjectWord<ObjectSideTable>(side)
        let table = word.object
        guard table.hookedObject == nil, !table.hasHooks else { return }
        let unused = table.withLock { () -> Bool in
            guard table.holdsNothing, !table.detached else { return false }
            table.detached = true
            return true
        }
        // Only deallocation clears the pointer otherwise, and it releases its reference itself.
        if unused, sf_object_detach_side(obj, side) { Runtime.state.retire(releasing: word) }
    }
}

extension ObjectSideTable {
    /// Stores `value` under `key` in `obj`'s table (the one implementation for Swift and C).
    static func store(_ value: Value, for key: UnsafeRawPointer, of obj: sf_id) {
        let old = add(to: obj) { $0.exchange(value, for: key) }
        releaseLast(old)
    }

    /// Removes the value under `key`, and the table with it if it was the last thing in it.
    static func removeValue(for key: UnsafeRawPointer, of obj: sf_id) {
        guard let table = of(obj, create: false), case let .done(old) = table.exchange(nil, for: key) else { return }
        dropIfUnused(obj, table)
        releaseLast(old)
    }
}
