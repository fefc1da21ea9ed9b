fn main() {
    println!("cargo:rerun-if-changed=c/callbacks.c");
    cc::Build::new()
        .file("c/callbacks.c")
        .std("c11")
        .compile("plenum_test_callbacks");
}
