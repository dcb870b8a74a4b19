import DynamicRuntime
import Foundation
import SelectorRunLoop
import XCTest

final class StallMonitorTests: XCTestCase {
    /// The stalling method blocks until the monitor has reported it, so the test does not
    /// depend on how long anything takes.
    func testAStallIsReportedWithTheSelectorTheLoopWasPerforming() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        let reports = Locked<[StallReport]>([])
        let reported = DispatchSemaphore(value: 0)
        let monitor = try StallMonitor(runLoop: .current, modes: [.default], threshold: 0.01, consecutive: 3) { report in
            if reports.mutate({ $0.append(report); return $0.count }) == 1 { reported.signal() }
        }
        defer { monitor.stop() }
        let released = Locked(false)
        try recorder.cls.addMethod("crunch:") { (_: ObjectRef, _: ObjectRef) in
            released.mutate { $0 = reported.wait(timeout: .now() + 30) == .success }
        }
        try target.perform("crunch:", afterDelay: 0)
        XCTAssertTrue(spin { released.value })
        monitor.stop()
        let first = try XCTUnwrap(reports.value.first)
        XCTAssertEqual(first.selector, "crunch:")
        XCTAssertEqual(first.className, recorder.cls.name)
        XCTAssertEqual(first.consecutiveTimeouts, 3)
        XCTAssertTrue([.beforeSources, .afterWaiting].contains(first.activity))
        XCTAssertTrue(first.description.contains("crunch:"))
    }

    func testAnIdleLoopIsNotAStallAndStopJoins() throws {
        let reports = Locked(0)
        let monitor = try StallMonitor(runLoop: .current, modes: [.default], threshold: 0.05, consecutive: 3) { _ in
            reports.mutate { $0 += 1 }
        }
        // Sleeping (before-waiting) for many thresholds is idle, not a stall.
        _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.2))
        monitor.stop()
        monitor.stop()
        XCTAssertEqual(reports.value, 0)
    }

    func testBadSettingsAreRefused() {
        for (threshold, consecutive) in [(0.0, 1), (-1, 1), (.nan, 1), (.infinity, 1), (0.01, 0)] {
            XCTAssertThrowsError(try StallMonitor(threshold: threshold, consecutive: consecutive) { _ in }) {
                guard case .invalidInterval = $0 as? RunLoopError else { return XCTFail("\($0)") }
            }
        }
    }
}
