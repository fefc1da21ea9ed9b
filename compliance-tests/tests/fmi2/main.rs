//! Plenum's shared library driven through its fmi2 C functions as a master drives it: the ABI
//! and bad calls, the Co-Simulation state machine, Model Exchange's calling sequence and bad
//! calls, damaged and regression state blobs, and instances on parallel threads. (`fmi2_memory`
//! counts the master's allocations process-wide and stays a binary of its own.)

mod abi;
mod calling_sequence;
mod deserialize_props;
mod me_calls;
mod state_contents;
mod state_machine;
mod threads;
