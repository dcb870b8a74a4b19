import TestSupport
import MessageThrottle
import XCTest

/// Every mode against marble timelines (docs/modes.md's notation; see `marbles`). A tick is
/// 10ms.
final class MarbleTests: XCTestCase {
    func testFirstlyMeasuresFromThePerformedMessage() {
        // docs/modes.md: messages at 0, 30, 60, 90, 100, 150, 200, 260; d = 100.
        assertMarbles("a--b--c--de----f----g-----h", .firstly, duration: 100,
                      "!--x--x--x!----x----!-----x")
    }

    func testCooldownRejectsWhileCooling() {
        assertMarbles("ab---c----d-e", .cooldown, duration: 100,
                      "!R---R----!-R")
    }

    func testLastPerformsEachWindowsLastMessageAtItsEnd() {
        assertMarbles("abc-d------", .last, duration: 30,
                      "---^c---^d---")
    }

    func testDebouncePerformsTheLastMessageAfterQuiet() {
        assertMarbles("a-b-c-------", .debounce, duration: 30,
                      "-------^c----")
    }

    func testDebounceMaxWaitPerformsAtLeastEveryMaxWait() {
        // docs/modes.md: a message every 10ms for 200ms, d = 50, maxWait = 100.
        assertMarbles("abcdefghijklmnopqrstu", .debounceMaxWait(.milliseconds(100)), duration: 50,
                      "----------^j---------^t----^u")
    }

    func testThrottleBothEdges() {
        assertMarbles("abcdefg----", .throttle(leading: true, trailing: true), duration: 30,
                      "!--^c--^f--^g-")
    }

    func testThrottleLeadingOnly() {
        assertMarbles("abcdefg", .throttle(leading: true, trailing: false), duration: 30,
                      "!xx!xx!")
    }

    func testThrottleWithNeitherEdgeDropsEverything() {
        assertMarbles("abc----d", .throttle(leading: false, trailing: false), duration: 30,
                      "xxx----x")
    }

    func testALateMessageSettlesTheDueEdgeFirstInTheSameTick() {
        // The edge at 30 and the message at 30 share a tick: the edge is processed first.
        assertMarbles("a--b", .last, duration: 30, "---^a--^b")
    }

    func testZeroDurationPerformsEverythingInEveryMode() {
        for mode in LimiterStateMachineEventTests.modes {
            assertMarbles("ab-c", mode, duration: 0, "!!-!")
        }
    }
}
