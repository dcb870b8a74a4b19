// expect: mutation of captured var 'gone' in concurrently-executing code
// A deallocation observer runs on whichever thread releases the object last.
import DynamicRuntime

func track(_ object: Object) {
    var gone = false
    object.onDeallocate { _ in gone = true }
}
