import CoreFoundation
import Foundation

/// The stages of a run loop's pass that an observer can watch (CFRunLoopActivity; Linux's
/// CoreFoundation import lacks the named constants, so the raw values are spelled here).
public struct RunLoopActivity: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The raw CFRunLoopActivity bits.
    public let rawValue: UInt
    /// Creates an activity set from CFRunLoopActivity bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The loop is entered (`run(mode:before:)` starts a pass).
    public static let entry = RunLoopActivity(rawValue: 1)
    /// Timers are about to be processed.
    public static let beforeTimers = RunLoopActivity(rawValue: 2)
    /// Sources (and performed blocks) are about to be processed.
    public static let beforeSources = RunLoopActivity(rawValue: 4)
    /// The loop is about to sleep.
    public static let beforeWaiting = RunLoopActivity(rawValue: 32)
    /// The loop has woken up.
    public static let afterWaiting = RunLoopActivity(rawValue: 64)
    /// The loop is exited.
    public static let exit = RunLoopActivity(rawValue: 128)
    /// Every activity.
    public static let all: RunLoopActivity = [.entry, .beforeTimers, .beforeSources, .beforeWaiting, .afterWaiting, .exit]

    /// The names of the activities in the set, e.g. `[entry, exit]`.
    public var description: String {
        let names: [(RunLoopActivity, String)] = [(.entry, "entry"), (.beforeTimers, "beforeTimers"), (.beforeSources, "beforeSources"),
                                                  (.beforeWaiting, "beforeWaiting"), (.afterWaiting, "afterWaiting"), (.exit, "exit")]
        return "[" + names.filter { contains($0.0) }.map(\.1).joined(separator: ", ") + "]"
    }
}

/// A run-loop observer with a Swift handler (CFRunLoopObserver underneath).
///
/// The loop holds the observer, and the observer its handler, until ``invalidate()`` (or its
/// first callout if it does not repeat). Observers alone do not keep a run going: a pass with
/// no source or timer in its mode returns at once without callouts (notes: what keeps a run alive).
public final class RunLoopObserver: @unchecked Sendable {
    /// The activities observed.
    public let activities: RunLoopActivity
    /// Whether the observer stays after its first callout.
    public let repeats: Bool
    private let cfObserver: Locked<CFRunLoopObserver?>
    private let added = Locked(false)

    /// An observer calling `handler` with each of `activities`, on the loop's thread, ordered
    /// among other observers by `order` (lower first).
    public init(activities: RunLoopActivity, repeats: Bool = true, order: Int = 0,
                handler: @escaping @Sendable (RunLoopActivity) -> Void) {
        self.activities = activities
        self.repeats = repeats
        let observer = CFRunLoopObserverCreateWithHandler(nil, CFOptionFlags(activities.rawValue), repeats, CFIndex(order)) { _, activity in
            handler(RunLoopActivity(rawValue: UInt(activity.rawValue)))
        }
        cfObserver = Locked(observer)
    }

    /// Adds the observer to `runLoop` in each of `modes`. An observer is added to one loop once.
    ///
    /// - Throws: ``RunLoopError/alreadyScheduled(selector:)`` if it was added already,
    ///   ``RunLoopError/invalidated(selector:)`` once invalidated, or a mode or loop error.
    public func add(to runLoop: RunLoop = .current, forModes modes: [RunLoop.Mode] = [.default]) throws(RunLoopError) {
        let loop = try Loops.handle(runLoop)
        let cfModes = try Modes.cf(modes)
        guard let observer = cfObserver.withLock({ $0 }) else { throw .invalidated(selector: "observer") }
        let first = added.withLock { a in
            defer { a = true }
            return !a
        }
        guard first else { throw .alreadyScheduled(selector: "observer") }
        for mode in cfModes { CFRunLoopAddObserver(loop.cf, observer, mode) }
    }

    /// Whether the observer still gets callouts.
    public var isValid: Bool {
        guard let observer = cfObserver.withLock({ $0 }) else { return false }
        return CFRunLoopObserverIsValid(observer)
    }

    /// Removes the observer from its loop and releases its handler. Idempotent; any thread.
    public func invalidate() {
        let observer = cfObserver.withLock { o in
            defer { o = nil }
            return o
        }
        if let observer { CFRunLoopObserverInvalidate(observer) }
    }

    deinit {
        // An observer added to a loop stays there until invalidated, as in CF; one never added
        // is simply dropped.
        if !added.withLock({ $0 }), let observer = cfObserver.withLock({ $0 }) { CFRunLoopObserverInvalidate(observer) }
    }
}
