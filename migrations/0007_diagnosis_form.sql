-- Diagnoses as codes with their parameters: each event keeps how its message was made (the
-- catalogue sentences by key with their arguments, as JSON) beside the words, so that history
-- says it again in the reader's language from the catalogues of the build that reads it. Rows
-- written before this column, and rows whose sentence a later build no longer has, are read
-- from their stored words (`message`, `message_ja`) as before.
ALTER TABLE diagnosis_events ADD COLUMN message_form TEXT;
