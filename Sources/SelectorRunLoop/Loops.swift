import CoreFoundation
import Foundation

/// A run loop with its CoreFoundation loop. Foundation on Linux does not make `getCFRunLoop()`
/// public, so the pair is learnt on the loop's own thread (`CFRunLoopGetCurrent`) or is the
/// main loop's (docs/run-loops.md, "Which run loop").
struct LoopHandle: @unchecked Sendable {
    // CFRunLoop's timer, source, observer and wake-up functions are thread-safe.
    let runLoop: RunLoop
    let cf: CFRunLoop

    var key: ObjectIdentifier { ObjectIdentifier(runLoop) }

    /// Wakes the loop: a block performed from another thread does not (notes: no wake-up).
    /// The calling thread's own loop is awake already.
    func wakeUp() {
        if CFRunLoopGetCurrent() !== cf { CFRunLoopWakeUp(cf) }
    }
}

enum Loops {
    // Retaining the CF loop keeps its RunLoop alive, so an identifier is never reused while
    // it is in the table; RunLoopThread removes its own at exit.
    private static let table = Locked<[ObjectIdentifier: LoopHandle]>([:])

    /// The handle of `runLoop`: the main loop, a loop seen before, or the calling thread's.
    static func handle(_ runLoop: RunLoop) throws(RunLoopError) -> LoopHandle {
        if runLoop === RunLoop.main { return LoopHandle(runLoop: runLoop, cf: CFRunLoopGetMain()) }
        if let known = table.withLock({ $0[ObjectIdentifier(runLoop)] }) { return known }
        guard runLoop === RunLoop.current else { throw .unknownRunLoop }
        return register(runLoop, CFRunLoopGetCurrent())
    }

    /// The calling thread's loop.
    static var current: LoopHandle {
        let runLoop = RunLoop.current
        if runLoop === RunLoop.main { return LoopHandle(runLoop: runLoop, cf: CFRunLoopGetMain()) }
        if let known = table.withLock({ $0[ObjectIdentifier(runLoop)] }) { return known }
        return register(runLoop, CFRunLoopGetCurrent())
    }

    @discardableResult
    static func register(_ runLoop: RunLoop, _ cf: CFRunLoop) -> LoopHandle {
        let handle = LoopHandle(runLoop: runLoop, cf: cf)
        table.withLock { $0[handle.key] = handle }
        return handle
    }

    static func unregister(_ handle: LoopHandle) {
        let removed = table.withLock { $0.removeValue(forKey: handle.key) }
        _ = removed // released outside the lock
    }
}

extension RunLoop {
    /// Makes this thread's run loop known to SelectorRunLoop, so that other threads may name
    /// it in `schedule(on:)`, `perform(_:on:…)` and `RunLoopExecutor`. Call it on the loop's
    /// own thread (a `RunLoopThread` and the main loop need no call).
    public static func registerCurrentForSelectors() {
        _ = Loops.current
    }

    /// Adds `mode` to this loop's common modes (as UIKit does with its tracking mode), so
    /// that timers, requests and rules scheduled in `.common` also run in it.
    ///
    /// - Throws: ``RunLoopError/unknownRunLoop`` for a loop of another thread not seen yet.
    public func addCommonMode(_ mode: RunLoop.Mode) throws(RunLoopError) {
        CFRunLoopAddCommonMode(try Loops.handle(self).cf, Modes.cf(mode))
    }
}

/// CoreFoundation mode names for Foundation's modes.
enum Modes {
    /// The CF names of `modes`. The common modes must be CF's own constant: an equal string
    /// makes an ordinary mode of that name (notes: common modes from CF).
    static func cf(_ modes: [RunLoop.Mode]) throws(RunLoopError) -> [CFRunLoopMode] {
        guard !modes.isEmpty else { throw .noModes }
        var seen = Set<String>()
        return modes.compactMap { mode in
            guard seen.insert(mode.rawValue).inserted else { return nil }
            return cf(mode)
        }
    }

    static func cf(_ mode: RunLoop.Mode) -> CFRunLoopMode {
        switch mode {
        case .common: return kCFRunLoopCommonModes
        case .default: return kCFRunLoopDefaultMode
        default: return CFStringCreateWithCString(nil, mode.rawValue, CFStringBuiltInEncodings.UTF8.rawValue)
        }
    }

    /// The CF absolute time `seconds` from now.
    static func absolute(after seconds: Double) -> CFAbsoluteTime { CFAbsoluteTimeGetCurrent() + seconds }
}

/// Checks an interval the caller passed: Linux's CF traps on NaN (notes: NaN interval).
func checkInterval(_ value: Double, _ what: String) throws(RunLoopError) {
    guard value.isFinite, value >= 0 else { throw .invalidInterval(what: what, value: value) }
}
