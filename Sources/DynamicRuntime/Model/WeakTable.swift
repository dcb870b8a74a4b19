import CShims

/// The table of weak slots per object. Loads and dealloc's clearing meet under one lock, so a
/// weak load either retains a live object or reads nil, never a dying one.
final class WeakTable: @unchecked Sendable {
    static let shared = WeakTable()

    let lock = RuntimeLock()
    private var slots: [sf_id: Set<UnsafeMutablePointer<sf_id?>>] = [:]

    func register(_ slot: UnsafeMutablePointer<sf_id?>, _ obj: sf_id?) {
        lock.withLock {
            slot.pointee = nil
            guard let obj else { return }
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
    }

    func loadRetained(_ slot: UnsafeMutablePointer<sf_id?>) -> sf_id? {
        lock.withLock {
            guard let obj = slot.pointee else { return nil }
            return sf_try_retain(obj) ? obj : nil
        }
    }

    func unregister(_ slot: UnsafeMutablePointer<sf_id?>) {
        lock.withLock {
            guard let obj = slot.pointee else { return }
            slot.pointee = nil
            if var set = slots[obj] {
                set.remove(slot)
                slots[obj] = set.isEmpty ? nil : set
            }
        }
    }

    func clear(_ obj: sf_id) {
        lock.withLock {
            guard let set = slots.removeValue(forKey: obj) else { return }
            for slot in set { slot.pointee = nil }
        }
    }
}
