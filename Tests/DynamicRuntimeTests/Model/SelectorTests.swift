import TestSupport
import CDynamicRuntime
import Synchronization
import XCTest
@testable import DynamicRuntime

final class SelectorTests: XCTestCase {
    func testSameNameInternsToOneSelector() {
        let a = Selector("selectorTests:same:")
        let b: Selector = "selectorTests:same:"
        XCTAssertEqual(a, b)
        XCTAssertEqual(a.raw, b.raw, "one id per name: the C pointer is the identity")
        XCTAssertEqual(a.hashValue, b.hashValue)
        XCTAssertEqual(a.name, "selectorTests:same:")
        XCTAssertEqual(a.description, "selectorTests:same:")
    }

    func testDifferentNamesDiffer() {
        let a = Selector("selectorTests.a")
        let b = Selector("selectorTests.b")
        XCTAssertNotEqual(a, b)
        XCTAssertNotEqual(a.raw, b.raw)
        XCTAssertEqual(Set([a, b, Selector("selectorTests.a")]).count, 2)
    }

    func testNameIsRecoverableFromTheCPointer() {
        let name = "selectorTests:recover:with:"
        let sel = Selector(name)
        XCTAssertEqual(String(cString: sf_sel_getName(sel.raw)), name)
        XCTAssertEqual(Selector(raw: sel.raw).name, name)
        XCTAssertEqual(sel.colonCount, 3)
        XCTAssertEqual(Selector("plain").colonCount, 0)
    }

    func testUnicodeAndEmptyNamesRoundTrip() {
        for name in ["", "größe:", "日本語:名前:", "with space"] {
            let sel = Selector(name)
            XCTAssertEqual(sel.name, name)
            XCTAssertEqual(Selector(name).raw, sel.raw)
        }
    }

    func testCRegistrationReturnsTheSwiftSelector() {
        let sel = Selector("selectorTests:fromC:")
        XCTAssertEqual(sf_sel_registerName("selectorTests:fromC:"), sel.raw)
        // A name first registered from C is the same selector in Swift.
        let fromC = sf_sel_registerName("selectorTests:firstFromC")!
        XCTAssertEqual(Selector("selectorTests:firstFromC").raw, fromC)
    }

    func testNullNameFromCFails() {
        XCTAssertNil(sf_sel_registerName(nil))
        XCTAssertEqual(sf_last_error(), SF_ERR_INVALID_ARGUMENT)
        XCTAssertNil(sf_sel_getName(nil))
    }

    /// Eight threads intern the same fresh names at once: each name gets one pointer.
    func testConcurrentInterningYieldsOnePointerPerName() {
        let names = (0..<2000).map { "selectorTests.concurrent.\($0).\(UInt64.random(in: 0...UInt64.max))" }
        let threads = 8
        let results = Mutex<[[UInt]]>(Array(repeating: [], count: threads))
        runThreads(threads) { t in
            // Alternate directions so threads race on the same names from both ends.
            let order = t.isMultiple(of: 2) ? Array(names.indices) : names.indices.reversed()
            var mine = [UInt](repeating: 0, count: names.count)
            for i in order { mine[i] = UInt(bitPattern: Selector(names[i]).raw) }
            results.withLock { $0[t] = mine }
        }
        let all = results.withLock { $0 }
        for t in 1..<threads { XCTAssertEqual(all[t], all[0], "thread \(t) interned different pointers") }
        XCTAssertEqual(Set(all[0]).count, names.count, "distinct names must get distinct selectors")
        for (i, name) in names.enumerated() {
            XCTAssertEqual(Selector(name).raw, sf_sel(bitPattern: all[0][i]))
        }
    }

    func testSelectorsAreValidDictionaryKeysAcrossCopies() {
        var table: [Selector: Int] = [:]
        for i in 0..<500 { table[Selector("selectorTests.key\(i)")] = i }
        for i in 0..<500 { XCTAssertEqual(table[Selector("selectorTests.key\(i)")], i) }
    }
}
