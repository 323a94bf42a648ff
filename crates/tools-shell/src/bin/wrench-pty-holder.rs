//! The PTY holder as a standalone binary (the `wrench` CLI also runs it as
//! `wrench __pty-holder`). See `wrench_tools_shell::holder`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(wrench_tools_shell::pty_holder_main(&args));
}
