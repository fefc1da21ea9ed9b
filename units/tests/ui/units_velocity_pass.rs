// The passing twin of units_length_from_velocity_fail.rs: length / time is a velocity.
use plenum_units::{Length, Time, Velocity, si::meter, si::meter_per_second, si::second};

fn main() {
    let length = Length::new::<meter>(3.0);
    let time = Time::new::<second>(2.0);
    let v: Velocity = length / time;
    assert_eq!(v.get::<meter_per_second>(), 1.5);
}
