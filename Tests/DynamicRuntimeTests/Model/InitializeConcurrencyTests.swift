import CDynamicRuntime
import Glibc
import Synchronization
import XCTest
@testable import DynamicRuntime

/// Threads racing to a class's first message (objc4 test/initialize.m's threaded cases, GNUstep
/// config.initialize.m): exactly one runs `+initialize`, and every other one waits for it to
/// return before its own message runs.
final class InitializeConcurrencyTests: XCTestCase {
    func testThreadsRacingToTheFirstMessageRunItOnceAndAllWaitForIt() throws {
        for round in 0..<20 {
            let cls = try RuntimeClass(name: uniqueName("InitRace\(round)"))
            let runs = Atomic<Int>(0)
            let finished = Atomic<Bool>(false)
            let early = Atomic<Int>(0)
            try cls.metaclass.addMethod("initialize") { (_: ObjectRef) in
                runs.add(1, ordering: .relaxed)
                for _ in 0..<200 { sched_yield() }
                finished.store(true, ordering: .releasing)
            }
            try cls.addMethod("value") { (_: ObjectRef) in
                if !finished.load(ordering: .acquiring) { early.add(1, ordering: .relaxed) }
                return 5
            }
            try cls.metaclass.addMethod("make") { (_: ObjectRef) in
                if !finished.load(ordering: .acquiring) { early.add(1, ordering: .relaxed) }
                return 1
            }
            let wrong = Atomic<Int>(0)
            runThreads(12) { i in
                do {
                    if i % 2 == 0 {
                        let r: Int = try ObjectRef(sf_class_as_object(cls.raw)).send("make")
                        if r != 1 { wrong.add(1, ordering: .relaxed) }
                    } else {
                        let r: Int = try cls.createInstance().send("value")
                        if r != 5 { wrong.add(1, ordering: .relaxed) }
                    }
                } catch {
                    wrong.add(1, ordering: .relaxed)
                }
            }
            XCTAssertEqual(runs.load(ordering: .relaxed), 1, "round \(round)")
            XCTAssertEqual(early.load(ordering: .relaxed), 0, "no message ran before +initialize returned")
            XCTAssertEqual(wrong.load(ordering: .relaxed), 0)
        }
    }

    func testASecondThreadIsHeldUntilInitializeReturns() throws {
        let cls = try RuntimeClass(name: uniqueName("InitBlocks"))
        let secondStarted = Atomic<Bool>(false)
        let entered = Atomic<Int>(0)
        let enteredWhileInitializing = Atomic<Int>(-1)
        try cls.metaclass.addMethod("initialize") { (_: ObjectRef) in
            // Wait for the other thread to be on its way to the class, then give it every chance
            // to get in: it must stay out until this returns.
            while !secondStarted.load(ordering: .acquiring) { sched_yield() }
            for _ in 0..<2000 { sched_yield() }
            enteredWhileInitializing.store(entered.load(ordering: .acquiring), ordering: .releasing)
        }
        try cls.metaclass.addMethod("enter") { (_: ObjectRef) in entered.add(1, ordering: .acquiringAndReleasing) }
        runThreads(2) { i in
            if i == 1 {
                while sf_class_info(cls.raw) == 0 { sched_yield() }
                // Let thread 0 win the race to the first message.
                while cls.initializationState.load(ordering: .acquiring) == ClassInitialization.none { sched_yield() }
                secondStarted.store(true, ordering: .releasing)
            }
            try? ObjectRef(sf_class_as_object(cls.raw)).send("enter", as: Void.self)
        }
        XCTAssertEqual(enteredWhileInitializing.load(ordering: .acquiring), 0)
        XCTAssertEqual(entered.load(ordering: .acquiring), 2)
    }
}
