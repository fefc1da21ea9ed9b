// A length divided by a time is a velocity: assigning it to a length must not compile.
use plenum_units::{Length, Time, si::meter, si::second};

fn main() {
    let length = Length::new::<meter>(3.0);
    let time = Time::new::<second>(2.0);
    let l: Length = length / time;
    println!("{l:?}");
}
