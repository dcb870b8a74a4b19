// The unsafe layer's counts: a word made retaining holds its object until it is released or
// taken, a published object holds its +1 until it is replaced (then until the grace period
// ends) or until the slot goes, and casts of C functions call the same code.
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

private final class Counted {
    nonisolated(unsafe) static var alive = 0
    let value: Int
    init(_ value: Int) { self.value = value; Counted.alive += 1 }
    deinit { Counted.alive -= 1 }
}

private struct Failure: Error, Equatable { let code: Int }

final class UnsafeLayerTests: XCTestCase {
    override func setUp() {
        Runtime.state.collectGarbage()
        Counted.alive = 0
    }

    func testRetainingWordKeepsItsObjectUntilReleased() {
        var object: Counted? = Counted(1)
        let word = ObjectWord(retaining: object!)
        object = nil
        XCTAssertEqual(Counted.alive, 1, "the word's +1 keeps the object")
        XCTAssertEqual(word.withObject { $0.value }, 1)
        XCTAssertEqual(ObjectWord<Counted>(nonZeroBits: word.bits), word)
        XCTAssertEqual(ObjectWord<Counted>(word.pointer), word)
        word.release()
        XCTAssertEqual(Counted.alive, 0)
    }

    func testTakeHandsTheWordsCountToTheCaller() {
        let word = ObjectWord(retaining: Counted(2))
        var taken: Counted? = word.take()
        XCTAssertEqual(taken?.value, 2)
        taken = nil
        XCTAssertEqual(Counted.alive, 0, "take() adopted the +1 rather than adding one")
    }

    func testUnretainedWordAddsNoCount() {
        var object: Counted? = Counted(3)
        let word = ObjectWord(unretained: object!)
        XCTAssertEqual(word.object.value, 3)
        object = nil
        XCTAssertEqual(Counted.alive, 0)
        XCTAssertNil(ObjectWord<Counted>(bits: 0))
    }

    func testWithObjectKeepsTheBodysTypedError() {
        let object = Counted(4)
        let word = ObjectWord(unretained: object)
        do throws(Failure) {
            try word.withObject { (o: Counted) throws(Failure) in throw Failure(code: o.value) }
            XCTFail("the body threw")
        } catch {
            XCTAssertEqual(error, Failure(code: 4))
        }
        withExtendedLifetime(object) {}
    }

    func testPublishedObjectRetiresWhatItReplacesAfterTheGracePeriod() {
        do {
            let slot = PublishedObject(Counted(5))
            XCTAssertEqual(Counted.alive, 1)
            XCTAssertEqual(slot.load()?.withObject { $0.value }, 5)
            sf_rcu_enter()
            Runtime.state.lock.withLock { slot.publish(Counted(6)) }
            Runtime.state.collectGarbage()
            XCTAssertEqual(Counted.alive, 2, "a reader in a section may still hold the replaced object")
            sf_rcu_exit()
            Runtime.state.collectGarbage()
            XCTAssertEqual(Counted.alive, 1, "freed once no reader can hold it")
            XCTAssertEqual(slot.object?.value, 6)
            Runtime.state.lock.withLock { slot.publish(nil) }
            XCTAssertTrue(slot.isNil)
            Runtime.state.collectGarbage()
            XCTAssertEqual(Counted.alive, 0)
            Runtime.state.lock.withLock { slot.publish(Counted(7)) }
        }
        XCTAssertEqual(Counted.alive, 0, "the slot releases what it holds when it goes")
    }

    func testAtomicObjectWordStoresWithoutCounting() {
        let object = Counted(8)
        let slot = AtomicObjectWord<Counted>()
        XCTAssertTrue(slot.isNil)
        slot.store(ObjectWord(unretained: object))
        XCTAssertEqual(slot.loadNonNil().object.value, 8)
        XCTAssertEqual(slot.exchange(nil), ObjectWord(unretained: object))
        XCTAssertNil(slot.load())
        XCTAssertEqual(Counted.alive, 1)
        withExtendedLifetime(object) {}
    }

    func testCFunctionCastsCallTheSameCode() {
        typealias Add = @convention(c) (Int, Int) -> Int
        let add: Add = { $0 &+ $1 }
        let address = CFunction.address(of: add)
        XCTAssertEqual(CFunction.at(address, as: Add.self)(2, 3), 5)
        XCTAssertEqual(CFunction.at(bits: CFunction.bits(of: add), as: Add.self)(4, 5), 9)
        let imp = CFunction.cast(add, to: sf_imp.self)
        XCTAssertTrue(CFunction.same(imp, add))
        XCTAssertEqual(CFunction.cast(imp, to: Add.self)(6, 7), 13)
    }
}
