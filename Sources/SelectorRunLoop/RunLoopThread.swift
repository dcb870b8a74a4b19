import CoreFoundation
import Foundation

/// A thread that keeps its run loop running, for perform requests, timers and rules delivered
/// on it, until ``stop()``.
///
/// A version-0 CoreFoundation source keeps the loop from running out of inputs (`Port()` traps
/// on Linux and `NSMachPort` is unavailable; notes: keep-alive). The loop runs in the default
/// mode, pass after pass, until stopped (`CFRunLoopStop` alone ends only the current pass).
public final class RunLoopThread: @unchecked Sendable, CustomStringConvertible {
    /// The thread's name. Inside the thread, `Thread.current.name` reads its first 15 bytes
    /// (Linux's limit for a thread's name).
    public let name: String

    private struct State {
        var loop: LoopHandle?
        var stopping = false
        var finished = false
        var tracked: [ObjectIdentifier: ImmediateRequest] = [:]
    }

    private let state = Locked(State())
    private let ready = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)
    private let thread: Locked<Thread?> = Locked(nil)

    /// Starts a thread named `name` and returns once its run loop takes requests.
    public init(name: String = "SelectorRunLoop.thread") {
        self.name = name
        let thread = Thread { [self] in main() }
        self.thread.withLock { $0 = thread }
        thread.start()
        ready.wait()
    }

    /// The thread's run loop (for `schedule(on:)`, `perform(_:afterDelay:on:)`, observers and
    /// `RunLoopExecutor`), or nil once stopped.
    public var runLoop: RunLoop? { state.withLock { $0.loop?.runLoop } }

    /// Whether ``stop()`` has been called: the thread takes no more requests.
    public var isStopping: Bool { state.withLock { $0.stopping } }

    /// Whether the thread has exited.
    public var isFinished: Bool { state.withLock { $0.finished } }

    var loop: LoopHandle? { state.withLock { $0.stopping ? nil : $0.loop } }

    private func main() {
        // On Linux Thread.name reads the system thread's name, and Foundation sets it only
        // once start() has stored the thread's handle, which this thread may run ahead of
        // (a name given before start() is lost the same way): the thread names itself, as
        // pthread_setname_np does (Glibc's module does not export it).
        Self.nameCurrentThread(Self.systemName(name))
        let loop = Loops.register(RunLoop.current, CFRunLoopGetCurrent())
        var context = CFRunLoopSourceContext()
        context.perform = { _ in }
        let source = CFRunLoopSourceCreate(nil, 0, &context)
        CFRunLoopAddSource(loop.cf, source, kCFRunLoopDefaultMode)
        state.withLock { $0.loop = loop }
        ready.signal()
        while !state.withLock({ $0.stopping }) {
            _ = loop.runLoop.run(mode: .default, before: .distantFuture)
        }
        CFRunLoopSourceInvalidate(source)
        let (abandoned, removed) = state.withLock { s in
            defer { (s.tracked, s.loop, s.finished) = ([:], nil, true) }
            return (Array(s.tracked.values), s.loop)
        }
        for request in abandoned { request.abandon() }
        // Delayed requests and timers on this loop will never fire: release what they hold.
        if let removed {
            PendingRequests.remove(PendingRequests.matching { $0.loop.key == removed.key })
            Loops.unregister(removed)
        }
        exited.signal()
    }

    /// Stops the loop after the current pass and waits for the thread to exit. Requests not
    /// yet run are released (a caller waiting on one gets ``RunLoopError/threadExited(name:)``).
    /// Idempotent. Called on the thread itself, it returns at once and the thread exits after
    /// the current pass.
    public func stop() {
        let (loop, first) = state.withLock { s in
            defer { s.stopping = true }
            return (s.loop, !s.stopping)
        }
        guard first, let loop else { return }
        CFRunLoopStop(loop.cf)
        loop.wakeUp()
        if loop.runLoop === RunLoop.current { return }
        exited.wait()
        thread.withLock { $0 = nil }
    }

    /// `name` cut to the 15 bytes Linux allows a thread's name, at a character boundary: a
    /// longer name is refused, and the thread would keep the process's.
    private static func nameCurrentThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = name.withCString { write(fd, $0, strlen($0)) }
    }

    static func systemName(_ name: String) -> String {
        var cut = "", bytes = 0
        for character in name {
            bytes += character.utf8.count
            guard bytes <= 15 else { break }
            cut.append(character)
        }
        return cut
    }

    func track(_ request: ImmediateRequest) -> Bool {
        state.withLock { s in
            guard !s.stopping else { return false }
            s.tracked[ObjectIdentifier(request)] = request
            return true
        }
    }

    func untrack(_ request: ImmediateRequest) {
        let removed = state.withLock { $0.tracked.removeValue(forKey: ObjectIdentifier(request)) }
        _ = removed
    }

    /// `<RunLoopThread name running>`.
    public var description: String { "<RunLoopThread \(name) \(isFinished ? "finished" : "running")>" }
}
