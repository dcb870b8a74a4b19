import Foundation
import Synchronization

// The process's memory mappings, for the W^X tests: no page may ever be writable and
// executable at once.

/// /proc/self/maps, read to the end (the file reports no size).
package func procMaps() -> String? {
    guard let f = fopen("/proc/self/maps", "r") else { return nil }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&chunk, 1, chunk.count, f)
        if n <= 0 { break }
        bytes += chunk[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Mappings in /proc/self/maps that are writable and executable at once (["unreadable"] when
/// the file could not be read whole).
package func writableExecutableMappings() -> [String] {
    guard let text = procMaps(), text.contains("[stack]") else { return ["unreadable"] }
    return text.split(separator: "\n").filter { line in
        let perms = line.split(separator: " ").dropFirst().first ?? ""
        return perms.contains("w") && perms.contains("x")
    }.map(String.init)
}

/// The permissions of the mapping holding `address` ("r-xp", …).
package func mappingPermissions(of address: UnsafeRawPointer) -> String? {
    guard let text = procMaps() else { return nil }
    let a = UInt(bitPattern: address)
    for line in text.split(separator: "\n") {
        let fields = line.split(separator: " ")
        let range = fields[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
        if range.count == 2, range[0] <= a, a < range[1] { return String(fields[1]) }
    }
    return nil
}

/// Reads /proc/self/maps over and over on a thread of its own while a test creates and
/// destroys code, so that a mapping writable and executable for a moment (made so, written,
/// then protected) is caught too, not only what is left between steps.
package final class MappingWatcher: Sendable {
    private let stopFlag = Atomic<Bool>(false)
    private let state = Mutex<(reads: Int, found: Set<String>, done: Bool)>((0, [], false))

    package init() {
        Thread { [self] in
            while !stopFlag.load(ordering: .acquiring) {
                let found = writableExecutableMappings()
                state.withLock {
                    $0.reads += 1
                    $0.found.formUnion(found)
                }
            }
            state.withLock { $0.done = true }
        }.start()
    }

    /// Stops the thread; returns how many times it read the file (at least once after
    /// everything the test did) and every writable+executable mapping it saw.
    package func stop() -> (reads: Int, found: [String]) {
        let readsBefore = state.withLock { $0.reads }
        // One whole read after everything so far, then stop.
        while state.withLock({ $0.reads }) < readsBefore + 2 { sched_yield() }
        stopFlag.store(true, ordering: .releasing)
        while !state.withLock({ $0.done }) { sched_yield() }
        return state.withLock { ($0.reads, $0.found.sorted()) }
    }
}
