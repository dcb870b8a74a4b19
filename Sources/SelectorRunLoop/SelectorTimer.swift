import CoreFoundation
import DynamicRuntime
import Foundation

/// A timer that sends a selector to a target, as `NSTimer` with a target and a selector.
///
/// The selector is sent through the runtime with the timer's object (``object``) as its
/// argument, or with none if the method takes none. As in Cocoa, the timer retains its target
/// and ``userInfo`` until it is invalidated, and the run loop retains a scheduled timer until
/// then. Backed by a CoreFoundation timer made with a handler, which releases what it holds at
/// invalidation (Foundation's block `Timer` never does on Linux; see docs/run-loops.md).
public final class SelectorTimer: @unchecked Sendable, CustomStringConvertible {
    /// Seconds between fires of a repeating timer (0 for a one-shot timer).
    public let timeInterval: TimeInterval
    /// Whether the timer fires again after each fire.
    public let repeats: Bool
    /// The selector sent at each fire.
    public let selector: Selector

    struct State {
        var message: CapturedMessage?
        var weakProxy: Object?
        var userInfo: (any Sendable)?
        var cfTimer: CFRunLoopTimer?
        var fireDate: CFAbsoluteTime
        /// When it last fired: the date CF fired it for, or the moment of a `fire()`.
        var lastFire: CFAbsoluteTime?
        var tolerance: TimeInterval = 0
        var scheduled = false
        var valid = true
    }

    let state: Locked<State>
    // Serializes deliveries (`fire()` may race the run loop's fire); recursive because a
    // method may call `fire()` on its own timer.
    private let deliveryLock = NSRecursiveLock()
    private let runtimeObject: Object
    // Seconds from scheduling to the first fire, unless a fire date was given.
    private let initialDelay: TimeInterval

    /// A timer that sends `selector` to `target` `interval` seconds after it is scheduled, and
    /// every `interval` seconds after that if `repeats` (a repeating interval below 0.1 ms is
    /// 0.1 ms, as in Cocoa).
    ///
    /// - Throws: ``RunLoopError`` for a nil target, an interval that is negative, NaN or
    ///   infinite, or a method taking anything but nothing or one object.
    public convenience init(timeInterval interval: TimeInterval, target: some MessageReceiver, selector: Selector,
                            userInfo: (any Sendable)? = nil, repeats: Bool) throws(RunLoopError) {
        try checkInterval(interval, "time interval")
        try self.init(fireDate: nil, interval: interval, target: target.receiver, weak: false,
                      selector: selector, userInfo: userInfo, repeats: repeats)
    }

    /// A timer that first fires at `fireDate`, then every `interval` seconds if `repeats`.
    public convenience init(fireAt fireDate: Date, interval: TimeInterval, target: some MessageReceiver, selector: Selector,
                            userInfo: (any Sendable)? = nil, repeats: Bool) throws(RunLoopError) {
        try checkInterval(interval, "time interval")
        try checkInterval(fireDate.timeIntervalSinceReferenceDate.magnitude, "fire date")
        try self.init(fireDate: fireDate.timeIntervalSinceReferenceDate, interval: interval, target: target.receiver,
                      weak: false, selector: selector, userInfo: userInfo, repeats: repeats)
    }

    /// A timer whose target is held weakly, through a weak proxy (the "mediator" pattern): an
    /// object may own its repeating timer and still be freed. On the first fire after the
    /// target is gone the timer invalidates itself without sending anything.
    public convenience init(timeInterval interval: TimeInterval, weakTarget target: some MessageReceiver, selector: Selector,
                            userInfo: (any Sendable)? = nil, repeats: Bool) throws(RunLoopError) {
        try checkInterval(interval, "time interval")
        try self.init(fireDate: nil, interval: interval, target: target.receiver, weak: true,
                      selector: selector, userInfo: userInfo, repeats: repeats)
    }

    private init(fireDate: CFAbsoluteTime?, interval: TimeInterval, target: ObjectRef, weak: Bool, selector: Selector,
                 userInfo: (any Sendable)?, repeats: Bool) throws(RunLoopError) {
        guard !target.isNil else { throw .nilTarget(selector: selector.name) }
        self.repeats = repeats
        // Linux's CF turns a repeating interval of 0 into a one-shot (notes: interval 0).
        timeInterval = repeats ? max(interval, 0.0001) : 0
        self.selector = selector
        let proxy = weak ? WeakProxyClass.make(wrapping: target) : nil
        let object = TimerObject.make()
        let message = try CapturedMessage(target: target, selector: selector, argument: object.ref, sendTo: proxy?.ref)
        runtimeObject = object
        initialDelay = interval
        state = Locked(State(message: message, weakProxy: proxy, userInfo: userInfo,
                             fireDate: fireDate ?? .nan))
        TimerObject.attach(self, to: object)
    }

    /// Makes a timer and schedules it on the current run loop in the default mode.
    public static func scheduled(timeInterval interval: TimeInterval, target: some MessageReceiver, selector: Selector,
                                 userInfo: (any Sendable)? = nil, repeats: Bool) throws(RunLoopError) -> SelectorTimer {
        let timer = try SelectorTimer(timeInterval: interval, target: target, selector: selector, userInfo: userInfo, repeats: repeats)
        try timer.schedule(on: .current, forModes: [.default])
        return timer
    }

    /// The runtime object passed to the method: it answers `invalidate`, `fire`, `isValid`,
    /// `userInfo` and `timeInterval`. ``from(_:)`` gives the timer back.
    public var object: ObjectRef { runtimeObject.ref }

    /// The timer whose ``object`` is `object`, if it is still alive.
    public static func from(_ object: some MessageReceiver) -> SelectorTimer? { TimerObject.timer(of: object.receiver) }

    /// Adds the timer to `runLoop` in each of `modes` (`.common` for the common modes). A timer
    /// is scheduled once.
    ///
    /// - Throws: ``RunLoopError/alreadyScheduled(selector:)``, ``RunLoopError/invalidated(selector:)``,
    ///   ``RunLoopError/noModes`` or ``RunLoopError/unknownRunLoop``; nothing is scheduled then.
    public func schedule(on runLoop: RunLoop = .current, forModes modes: [RunLoop.Mode] = [.default]) throws(RunLoopError) {
        let loop = try Loops.handle(runLoop)
        let cfModes = try Modes.cf(modes)
        let outcome: Result<CFRunLoopTimer?, RunLoopError> = state.withLock { s in
            guard s.valid else { return .failure(.invalidated(selector: selector.name)) }
            guard !s.scheduled else { return .failure(.alreadyScheduled(selector: selector.name)) }
            s.scheduled = true
            if s.fireDate.isNaN { s.fireDate = Modes.absolute(after: initialDelay) }
            let cfTimer = CFRunLoopTimerCreateWithHandler(nil, s.fireDate, repeats ? timeInterval : 0, 0, 0) { [self] timer in
                runLoopFired(timer)
            }
            if let cfTimer { CFRunLoopTimerSetTolerance(cfTimer, s.tolerance) }
            s.cfTimer = cfTimer
            return .success(cfTimer)
        }
        let timer = try outcome.get()
        guard let timer else { return }
        for mode in cfModes { CFRunLoopAddTimer(loop.cf, timer, mode) }
    }

    /// Whether the timer will still fire.
    public var isValid: Bool { state.withLock { $0.valid } }

    /// The next fire date; after invalidation, the date it last fired, as Cocoa documents
    /// (Linux's CF would read the reference date): the date a run-loop fire was due, or the
    /// moment of a ``fire()``. A timer invalidated before it ever fired reads the date it
    /// would have fired. Setting it moves the next fire.
    public var fireDate: Date {
        get {
            Date(timeIntervalSinceReferenceDate: state.withLock { s in
                if let t = s.cfTimer, s.valid { s.fireDate = CFRunLoopTimerGetNextFireDate(t) }
                return s.fireDate.isNaN ? Modes.absolute(after: initialDelay) : s.fireDate
            })
        }
        set {
            let value = newValue.timeIntervalSinceReferenceDate
            guard value.isFinite else { return }
            state.withLock { s in
                s.fireDate = value
                if let t = s.cfTimer, s.valid { CFRunLoopTimerSetNextFireDate(t, value) }
            }
        }
    }

    /// The allowed lateness, recorded and passed to CoreFoundation, which ignores it on Linux
    /// (notes: tolerance). Negative, NaN or infinite values are read as 0.
    public var tolerance: TimeInterval {
        get { state.withLock { $0.tolerance } }
        set {
            let value = newValue.isFinite && newValue > 0 ? newValue : 0
            state.withLock { s in
                s.tolerance = value
                if let t = s.cfTimer { CFRunLoopTimerSetTolerance(t, value) }
            }
        }
    }

    /// The value given at creation, held until the timer is invalidated.
    public var userInfo: (any Sendable)? { state.withLock { $0.userInfo } }

    /// Sends the message now, on this thread, without changing the schedule of a repeating
    /// timer; a one-shot timer is invalidated after. Does nothing once invalidated.
    public func fire() { deliver(at: CFAbsoluteTimeGetCurrent()) }

    /// Stops the timer: removes it from its run loop and releases its target, its proxy and
    /// ``userInfo``. Idempotent; any thread.
    public func invalidate() {
        let released: (CFRunLoopTimer?, CapturedMessage?, Object?, (any Sendable)?) = state.withLock { s in
            guard s.valid else { return (nil, nil, nil, nil) }
            s.valid = false
            // After a fire, CF's next fire date is already the slot after it.
            if let last = s.lastFire {
                s.fireDate = last
            } else if let t = s.cfTimer, s.scheduled {
                s.fireDate = CFRunLoopTimerGetNextFireDate(t)
            }
            defer { (s.cfTimer, s.message, s.weakProxy, s.userInfo) = (nil, nil, nil, nil) }
            return (s.cfTimer, s.message, s.weakProxy, s.userInfo)
        }
        // CF releases its handler, and with it this timer, at invalidation (notes: lifetime).
        if let timer = released.0 { CFRunLoopTimerInvalidate(timer) }
        _ = released
    }

    // In its callout CF has not moved the next fire date yet: it reads the date being fired.
    private func runLoopFired(_ timer: CFRunLoopTimer?) {
        deliver(at: timer.map(CFRunLoopTimerGetNextFireDate) ?? CFAbsoluteTimeGetCurrent())
    }

    private func deliver(at date: CFAbsoluteTime) {
        deliveryLock.lock()
        defer { deliveryLock.unlock() }
        guard let (message, proxy) = state.withLock({ s -> (CapturedMessage, Object?)? in
            guard let message = s.message else { return nil }
            s.lastFire = date
            return (message, s.weakProxy)
        }) else { return }
        if let proxy, Proxy.weakTarget(of: proxy) == nil {
            invalidate()
            return
        }
        let delivered = message.deliver(source: "timer")
        if !repeats || !delivered { invalidate() }
    }

    /// `<SelectorTimer -[Class selector] every 0.5 s>`.
    public var description: String {
        let target = state.withLock { $0.message?.className } ?? "invalidated"
        return "<SelectorTimer -[\(target) \(selector.name)]\(repeats ? " every \(timeInterval) s" : "")>"
    }
}
