import DynamicRuntime
import Foundation
import SelectorRunLoop
import XCTest

final class ObserverTests: XCTestCase {
    func testActivitiesArriveInPassOrderPerModeAndStopAfterInvalidate() throws {
        let seen = Locked<[RunLoopActivity]>([])
        let observer = RunLoopObserver(activities: .all) { activity in seen.mutate { $0.append(activity) } }
        try observer.add(to: .current, forModes: [tracking])
        let recorder = try Recorder()
        let timer = try SelectorTimer(timeInterval: 0, target: try recorder.make(), selector: "ping", repeats: false)
        try timer.schedule(forModes: [tracking])
        spin(.default, passes: 3)
        XCTAssertEqual(seen.value, [], "not observed in another mode")
        _ = RunLoop.current.run(mode: tracking, before: Date(timeIntervalSinceNow: 0.01))
        let pass = seen.value
        XCTAssertEqual(recorder.count, 1)
        XCTAssertEqual(pass.first, .entry)
        XCTAssertEqual(pass.last, .exit)
        XCTAssertEqual(Array(pass.prefix(3)), [.entry, .beforeTimers, .beforeSources])
        XCTAssertTrue(pass.allSatisfy { RunLoopActivity.all.contains($0) && $0.rawValue.nonzeroBitCount == 1 })
        XCTAssertTrue(observer.isValid)
        observer.invalidate()
        XCTAssertFalse(observer.isValid)
        let keepAlive = try SelectorTimer(timeInterval: 0.001, target: try recorder.make(), selector: "ping", repeats: true)
        try keepAlive.schedule(forModes: [tracking])
        spin(tracking, passes: 3)
        keepAlive.invalidate()
        XCTAssertEqual(seen.value, pass, "no callout after invalidate")
    }

    func testAOneShotObserverFiresOnceAndReleasesItsHandler() throws {
        var canary: Canary? = Canary()
        weak let weakCanary = canary
        let calls = Locked(0)
        let observer = RunLoopObserver(activities: [.beforeTimers, .beforeWaiting], repeats: false) { [canary] _ in
            withExtendedLifetime(canary) { calls.mutate { $0 += 1 } }
        }
        canary = nil
        try observer.add(forModes: [.default])
        XCTAssertThrowsError(try observer.add(forModes: [.default])) {
            XCTAssertEqual($0 as? RunLoopError, .alreadyScheduled(selector: "observer"))
        }
        spin(.default, passes: 5)
        XCTAssertEqual(calls.value, 1)
        XCTAssertFalse(observer.isValid)
        XCTAssertNil(weakCanary, "CF invalidated the one-shot observer after its callout and released the handler")
        observer.invalidate()
    }

    func testActivityDescriptionNamesEachStage() {
        XCTAssertEqual(RunLoopActivity.all.description, "[entry, beforeTimers, beforeSources, beforeWaiting, afterWaiting, exit]")
        XCTAssertEqual(RunLoopActivity([.entry, .exit]).description, "[entry, exit]")
    }
}
