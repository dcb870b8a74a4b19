import CoreFoundation
import DynamicRuntime
import Synchronization

/// The message a run loop is delivering right now, per monitored loop, for the stall monitor.
/// Unmonitored loops pay one atomic load per delivery.
enum CurrentMessage {
    final class Slot: @unchecked Sendable {
        let value = Locked<(className: String, selector: Selector)?>(nil)
    }

    private static let monitored = Atomic<Int>(0)
    // Keyed by the loop's address as an integer: a pointer key is not Sendable.
    private static let slots = Locked<[UInt: (slot: Slot, count: Int)]>([:])

    private static func key(_ cf: CFRunLoop) -> UInt { ObjectWord(unretained: cf).bits }

    /// The slot of `cf`, kept until as many `unwatch` calls as `watch` calls.
    static func watch(_ cf: CFRunLoop) -> Slot {
        monitored.add(1, ordering: .sequentiallyConsistent)
        return slots.withLock { table in
            let entry = table[key(cf)] ?? (Slot(), 0)
            table[key(cf)] = (entry.slot, entry.count + 1)
            return entry.slot
        }
    }

    static func unwatch(_ cf: CFRunLoop) {
        slots.withLock { table in
            guard let entry = table[key(cf)] else { return }
            table[key(cf)] = entry.count > 1 ? (entry.slot, entry.count - 1) : nil
        }
        monitored.subtract(1, ordering: .sequentiallyConsistent)
    }

    typealias Saved = (slot: Slot, previous: (className: String, selector: Selector)?)?

    static func enter(className: String, selector: Selector) -> Saved {
        guard monitored.load(ordering: .relaxed) > 0 else { return nil }
        let cf = CFRunLoopGetCurrent()!
        guard let slot = slots.withLock({ $0[key(cf)]?.slot }) else { return nil }
        let previous = slot.value.withLock { value in
            defer { value = (className, selector) }
            return value
        }
        return (slot, previous)
    }

    static func leave(_ saved: Saved) {
        guard let saved else { return }
        saved.slot.value.withLock { $0 = saved.previous }
    }
}
