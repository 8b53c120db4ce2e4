import FuzzTargets
import Glibc

// The libFuzzer driver (docs/fuzzing.md), built only by `scripts/fuzz` with
// `-Xswiftc -sanitize=fuzzer,address`. It runs libFuzzer through `LLVMFuzzerRunDriver`
// rather than libFuzzer's own `main`, because SwiftPM makes an executable's entry point
// `main`. PHOSRA_FUZZ_TARGET names the target; a property violation becomes a crash, which
// libFuzzer reports with the input that caused it. `phosra-fuzz --list` prints the names.

enum Selected {
    static let target = getenv("PHOSRA_FUZZ_TARGET").flatMap { FuzzTargets.named(String(cString: $0)) }
}

@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

if CommandLine.arguments.dropFirst().first == "--list" {
    for target in FuzzTargets.all { print(target.name) }
    exit(0)
}

guard Selected.target != nil else {
    let known = FuzzTargets.all.map(\.name).joined(separator: " ")
    let message = Array("set PHOSRA_FUZZ_TARGET to one of: \(known)\n".utf8)
    _ = message.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(2)
}

var argc = CommandLine.argc
var argv = CommandLine.unsafeArgv
exit(
    runFuzzerDriver(&argc, &argv) { data, size in
        let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        do throws(PropertyViolation) {
            try Selected.target?.run(input)
        } catch {
            fatalError(error.description)
        }
        return 0
    })
