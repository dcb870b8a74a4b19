import CDynamicRuntime
import Glibc

/// The process-wide name table. Selectors are never freed, as in Objective-C.
final class SelectorTable: @unchecked Sendable {
    static let shared = SelectorTable()

    let lock = RuntimeLock()
    /// By bytes: names are byte strings, as in Objective-C runtimes (see `NameKey`).
    private var byName: [NameKey: sf_sel] = [:]
    /// Every selector's address, to tell a selector from any other pointer (sf_msgForward).
    private var addresses: Set<UnsafeRawPointer> = []
    private var count: UInt32 = 0

    func intern(_ name: String) -> sf_sel { intern(NameKey(name)) }

    func intern(_ name: NameKey) -> sf_sel {
        lock.withLock {
            if let sel = byName[name] { return sel }
            let storage = UnsafeMutablePointer<sf_selector>.allocate(capacity: 1)
            count &+= 1
            // Spread consecutive ids over the cache's low bits (Fibonacci hashing).
            let hash = count &* 0x9E37_79B1
            storage.initialize(to: sf_selector(name: name.cStringCopy(), index: count, hash: (hash >> 16) ^ hash))
            let sel = sf_sel(storage)
            byName[name] = sel
            addresses.insert(UnsafeRawPointer(sel))
            return sel
        }
    }

    /// Whether `p` is a registered selector (any pointer may be asked; none is read).
    /// The selector with that name if registered; registers nothing.
    func lookup(_ name: String) -> sf_sel? {
        lock.withLock { byName[NameKey(name)] }
    }

    func contains(_ p: UnsafeRawPointer) -> Bool {
        lock.withLock { addresses.contains(p) }
    }
}
