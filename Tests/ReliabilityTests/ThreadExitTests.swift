import TestSupport
import XCTest
import Dispatch
import Foundation
import Glibc
import CDynamicRuntime
@testable import DynamicRuntime

/// A send from a thread-specific-data destructor that runs after the runtime's
/// own (an object released at thread exit whose dealloc observer sends) must be a protected
/// read-side section, and no other thread may take over its reader record meanwhile.
final class ThreadExitTests: XCTestCase {
    /// State for the C destructor, which cannot capture.
    nonisolated(unsafe) static var parkTarget: sf_id?
    nonisolated(unsafe) static var destructorKey = pthread_key_t()
    static let entered = DispatchSemaphore(value: 0)
    static let proceed = DispatchSemaphore(value: 0)
    static let finished = DispatchSemaphore(value: 0)

    func testASendFromALaterThreadExitDestructorIsProtected() throws {
        let c = try RuntimeClass(name: "Abuse.ThreadExit")
        try c.addMethod("park") { (_: ObjectRef) -> Int in
            ThreadExitTests.entered.signal()
            ThreadExitTests.proceed.wait()
            return 1
        }
        try c.addMethod("noop") { (_: ObjectRef) -> Int in 0 }
        let target = try c.createInstance()
        Self.parkTarget = target.raw
        // Created after the runtime's key, so its destructor runs after the runtime's.
        XCTAssertEqual(pthread_key_create(&Self.destructorKey) { value in
            // The object released at thread exit: its observer sends and parks inside the send.
            sf_release(value!.assumingMemoryBound(to: sf_object.self))
        }, 0)
        let dying = try c.createInstance()
        dying.onDeallocate { _ in
            _ = try? ObjectRef(ThreadExitTests.parkTarget).send("park") as Int
            ThreadExitTests.finished.signal()
        }
        let raw = sf_retain(dying.raw)!
        _ = consume dying

        var thread = pthread_t()
        XCTAssertEqual(pthread_create(&thread, nil, { arg in
            // A send first, so this thread has a reader record to give back at exit.
            _ = try? ObjectRef(ThreadExitTests.parkTarget).send("noop") as Int
            pthread_setspecific(ThreadExitTests.destructorKey, arg)
            return nil
        }, UnsafeMutableRawPointer(raw)), 0)

        Self.entered.wait()
        XCTAssertNotEqual(sf_rcu_oldest_reader(), UInt64.max, "the exiting thread's send is not a read-side section")
        // Other threads come and go while it is parked: none may take its record over.
        churnThreads(128)
        XCTAssertNotEqual(sf_rcu_oldest_reader(), UInt64.max,
                          "a new thread took over the reader record of a thread still inside a send")
        Self.proceed.signal()
        Self.finished.wait()
        pthread_join(thread, nil)
        pthread_key_delete(Self.destructorKey)
        // Records given back at exit still work for their next owners (no nesting underflow).
        XCTAssertEqual(churnThreads(128), 0, "a thread inside a section was not seen (nesting underflow)")
        XCTAssertEqual(sf_rcu_oldest_reader(), UInt64.max, "a reader record was left inside a section")
    }

    /// `count` threads that each take a reader record and hold it until all have; then each in
    /// turn, alone inside a section, checks that the section is seen. Returns how many were not.
    @discardableResult
    private func churnThreads(_ count: Int) -> Int {
        let group = DispatchGroup()
        let all = DispatchSemaphore(value: 0), registered = DispatchSemaphore(value: 0)
        let turn = NSLock()
        nonisolated(unsafe) var unseen = 0
        for _ in 0..<count {
            group.enter()
            Thread {
                sf_rcu_enter()
                sf_rcu_exit()
                registered.signal()
                all.wait()
                turn.withLock {
                    sf_rcu_enter()
                    if sf_rcu_oldest_reader() == UInt64.max { unseen += 1 }
                    sf_rcu_exit()
                }
                group.leave()
            }.start()
        }
        for _ in 0..<count { registered.wait() }
        for _ in 0..<count { all.signal() }
        group.wait()
        return unseen
    }
}
