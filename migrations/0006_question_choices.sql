-- The short answers a question offered as buttons (§3.7a), as a JSON array of
-- strings. A click names its choice by index, and the answer recorded is the
-- text kept here, so a button can only ever give an answer the prompt offered.
ALTER TABLE decisions ADD COLUMN choices TEXT;
