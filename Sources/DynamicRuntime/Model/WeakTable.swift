import CDynamicRuntime

/// The table of weak slots per object. Loads and dealloc's clearing meet under one lock, so a
/// weak load either retains a live object or reads nil, never a dying one.
final class WeakTable: @unchecked Sendable {
    static let shared = WeakTable()

    let lock = RuntimeLock()
    private var slots: [sf_id: Set<UnsafeMutablePointer<sf_id?>>] = [:]

    /// Points a slot that holds nothing registered at `obj` (objc_initWeak).
    func register(_ slot: UnsafeMutablePointer<sf_id?>, _ obj: sf_id?) {
        lock.withLock { registerNolock(slot, obj) }
    }

    /// Re-points a slot (nil, or registered before) at `obj` and returns what it now holds:
    /// `obj`, or nil when `obj` is being deallocated (objc_storeWeak).
    @discardableResult
    func store(_ slot: UnsafeMutablePointer<sf_id?>, _ obj: sf_id?) -> sf_id? {
        lock.withLock {
            unregisterNolock(slot)
            registerNolock(slot, obj)
            return slot.pointee
        }
    }

    /// Points `destination` (holding nothing registered) at what `source` refers to (objc_copyWeak).
    func copy(to destination: UnsafeMutablePointer<sf_id?>, from source: UnsafeMutablePointer<sf_id?>) {
        lock.withLock { registerNolock(destination, source.pointee) }
    }

    /// Moves `source`'s referent to `destination` (holding nothing registered) and leaves
    /// `source` nil, unregistered (objc_moveWeak).
    func move(to destination: UnsafeMutablePointer<sf_id?>, from source: UnsafeMutablePointer<sf_id?>) {
        lock.withLock {
            let obj = source.pointee
            unregisterNolock(source)
            registerNolock(destination, obj)
        }
    }

    private func registerNolock(_ slot: UnsafeMutablePointer<sf_id?>, _ obj: sf_id?) {
        slot.pointee = nil
        guard let obj else { return }
        // Class objects and small objects (refused by the public entry points, held by the
        // package's own references) are never deallocated: the slot holds them as they are.
        let flags = sf_object_flags(obj)
        if flags & UInt32(SF_OBJ_IMMORTAL) != 0 {
            slot.pointee = obj
            return
        }
        // A dying object is already nil to weak readers.
        guard flags & UInt32(SF_OBJ_DEALLOCATING) == 0, sf_object_retainCount(obj) > 0 else { return }
        sf_object_set_flags(obj, UInt32(SF_OBJ_HAS_WEAK))
        slot.pointee = obj
        slots[obj, default: []].insert(slot)
    }

    func loadRetained(_ slot: UnsafeMutablePointer<sf_id?>) -> sf_id? {
        lock.withLock {
            guard let obj = slot.pointee else { return nil }
            return sf_try_retain(obj) ? obj : nil
        }
    }

    /// Takes the slot out of the table and leaves it nil (objc_destroyWeak).
    func unregister(_ slot: UnsafeMutablePointer<sf_id?>) {
        lock.withLock { unregisterNolock(slot) }
    }

    private func unregisterNolock(_ slot: UnsafeMutablePointer<sf_id?>) {
        guard let obj = slot.pointee else { return }
        slot.pointee = nil
        if var set = slots[obj] {
            set.remove(slot)
            slots[obj] = set.isEmpty ? nil : set
        }
    }

    func clear(_ obj: sf_id) {
        lock.withLock {
            guard let set = slots.removeValue(forKey: obj) else { return }
            for slot in set { slot.pointee = nil }
        }
    }

    /// Unregisters a deallocating object's weak ivars, which live in its own memory (lock not
    /// held: called from teardown, before the memory is freed).
    func destroyWeakIvars(of obj: sf_id, offsets: [Int]) {
        guard !offsets.isEmpty else { return }
        lock.withLock {
            for offset in offsets {
                unregisterNolock((UnsafeMutableRawPointer(obj) + offset).assumingMemoryBound(to: sf_id?.self))
            }
        }
    }

    /// Whether `slot` is registered for `obj` (for tests of the table's bookkeeping).
    func isRegistered(_ slot: UnsafeMutablePointer<sf_id?>, for obj: sf_id) -> Bool {
        lock.withLock { slots[obj]?.contains(slot) ?? false }
    }
}
