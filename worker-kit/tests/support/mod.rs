pub mod shout;
