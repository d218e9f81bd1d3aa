"""Write the tiny BEIR-format dataset used by the rag tests (and as an example of --dataset beir:DIR).

    python eval/retrieval/beir-mini/make_beir_mini.py

Short passages on everyday topics; queries mix paraphrases (favouring dense retrieval) and rare names
or codes (favouring BM25). qrels grade 2 = answers the query, 1 = on topic but does not answer it.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent

# fmt: off
CORPUS = {
    "bread-1": ("Sourdough starter", "A sourdough starter is a mixture of flour and water that wild yeast and lactic acid bacteria have colonised. Feed it once a day at room temperature."),
    "bread-2": ("Proofing dough", "Let shaped dough rise until it has grown by about half. An over-proofed loaf collapses in the oven and has a sour, flat taste."),
    "bread-3": ("Baking temperature", "Most crusty loaves bake at 230 degrees Celsius for the first twenty minutes with steam, then at 210 degrees until the crust is deep brown."),
    "bread-4": ("Gluten", "Kneading develops gluten, the network of proteins that traps gas and lets bread rise. Rye flour forms little gluten, so rye breads are dense."),
    "bike-1": ("Fixing a puncture", "To mend a flat tyre, remove the inner tube, find the hole by listening for air or dunking it in water, roughen the area and glue on a patch."),
    "bike-2": ("Chain care", "Clean the bicycle chain with a degreaser and relubricate it every few hundred kilometres; a dry chain wears the cassette quickly."),
    "bike-3": ("Tyre pressure", "Road bike tyres usually run at 80 to 100 psi, while mountain bike tyres are run much softer, often 25 to 35 psi, for grip."),
    "bike-4": ("Brake pads", "Replace rim brake pads when the grooves are worn away. Disc brake pads should be changed when less than 1.5 mm of material remains."),
    "garden-1": ("Tomato blight", "Late blight causes brown patches on tomato leaves and fruit, spreading fast in warm wet weather. Remove affected plants and do not compost them."),
    "garden-2": ("Watering seedlings", "Water seedlings from below so the soil stays evenly moist without washing the young roots out; soggy compost invites damping off."),
    "garden-3": ("Composting", "A compost heap needs a mix of green material such as grass clippings and brown material such as dry leaves or cardboard, turned every few weeks."),
    "garden-4": ("Pruning roses", "Prune most roses in late winter, cutting just above an outward-facing bud and removing dead, crossing or weak stems."),
    "health-1": ("Sleep and memory", "During deep sleep the brain replays the day's experiences, which helps move new memories into long-term storage."),
    "health-2": ("Hydration", "Thirst, dark urine and headaches are early signs of dehydration. Older adults feel thirst less and may need reminders to drink."),
    "health-3": ("Stretching", "Static stretching before a sprint can briefly reduce power; a dynamic warm-up such as leg swings and skips is a better preparation."),
    "health-4": ("Sunscreen", "Apply broad-spectrum sunscreen of at least SPF 30 fifteen minutes before going out and reapply every two hours and after swimming."),
    "money-1": ("Emergency fund", "Financial planners often suggest keeping three to six months of essential expenses in an easy-access savings account for emergencies."),
    "money-2": ("Compound interest", "Compound interest means earning interest on earlier interest, so savings grow faster the longer they are left untouched."),
    "money-3": ("Index funds", "An index fund tracks a market index such as a broad share index, offering diversification with low fees compared with actively managed funds."),
    "money-4": ("Credit score", "Paying bills on time and keeping card balances low relative to credit limits are the two biggest influences on a credit score."),
    "tech-1": ("Password managers", "A password manager generates and stores a unique strong password for every site, so a leak at one service does not expose the others."),
    "tech-2": ("Two-factor authentication", "Two-factor authentication asks for a second proof of identity, such as a code from an app, in addition to the password."),
    "tech-3": ("Error 0x80070005", "Windows error 0x80070005 means access denied: the updater lacks permission to write a file. Running the update as an administrator usually fixes it."),
    "tech-4": ("Backups", "The 3-2-1 rule for backups: keep three copies of your data, on two different kinds of storage, with one copy off site."),
    "travel-1": ("Jet lag", "Jet lag is usually worse flying east. Getting daylight in the morning at the destination helps the body clock shift faster."),
    "travel-2": ("Packing light", "Rolling clothes instead of folding them saves space in a suitcase and reduces creases on long trips."),
    "travel-3": ("Travel insurance", "Travel insurance can cover cancelled flights, lost luggage and medical treatment abroad; check the excess and exclusions before buying."),
    "travel-4": ("Kestrel Pass", "The Kestrel Pass road is closed from November to April because of avalanche risk; the detour via Lorn adds about 90 kilometres."),
    "pets-1": ("Cat grooming", "Long-haired cats need brushing every day to prevent mats; short-haired cats usually need brushing only once a week."),
    "pets-2": ("Dog training", "Reward-based training, giving a treat the moment a dog does the right thing, teaches faster than punishment and keeps the dog confident."),
    "pets-3": ("Toxic foods for dogs", "Chocolate, grapes, raisins, onions and the sweetener xylitol are poisonous to dogs, even in small amounts."),
    "pets-4": ("Aquarium cycling", "Before adding fish, cycle a new aquarium for several weeks so that bacteria can establish and convert ammonia into less harmful nitrate."),
    "home-1": ("Damp walls", "Condensation on cold walls causes black mould. Ventilate kitchens and bathrooms and keep rooms evenly heated to prevent it."),
    "home-2": ("Dripping tap", "A dripping tap usually needs a new washer or cartridge. Turn off the water supply under the sink before taking the tap apart."),
    "home-3": ("Heat pumps", "A heat pump moves heat from outside air or ground into the house and typically delivers three units of heat for each unit of electricity."),
    "home-4": ("Paint finishes", "Matt paint hides wall imperfections, while eggshell and satin finishes are easier to wipe clean in kitchens and hallways."),
    "code-1": ("Model ZX-41 reset", "To factory-reset the ZX-41 router, hold the recessed button for ten seconds until the lights flash amber, then wait two minutes."),
    "code-2": ("Form T-227", "Form T-227 is used to claim a refund of overpaid vehicle tax; it must be submitted within six months of the vehicle being sold."),
    "code-3": ("Part HV-9 valve", "The HV-9 valve controls hot water flow to the radiator circuit; a stuck HV-9 is the usual cause of cold radiators upstairs."),
    "code-4": ("Route 17b bus", "The 17b bus runs every twenty minutes between the station and the hospital, with the last departure at 23:10."),
}

QUERIES = {
    "q1": ("why did my loaf sink in the oven", {"bread-2": 2, "bread-3": 1}),
    "q2": ("how hot should the oven be for crusty bread", {"bread-3": 2}),
    "q3": ("my bike tire keeps going flat how do I repair it", {"bike-1": 2, "bike-3": 1}),
    "q4": ("when should disc brake pads be replaced", {"bike-4": 2}),
    "q5": ("brown spots spreading on tomato plants in wet weather", {"garden-1": 2}),
    "q6": ("what should go into a compost pile", {"garden-3": 2}),
    "q7": ("does sleeping help you remember things", {"health-1": 2}),
    "q8": ("signs that you are not drinking enough water", {"health-2": 2}),
    "q9": ("how much money to keep aside for emergencies", {"money-1": 2, "money-2": 1}),
    "q10": ("what improves a credit rating", {"money-4": 2}),
    "q11": ("0x80070005 access denied update", {"tech-3": 2}),
    "q12": ("how many copies of my files should I keep", {"tech-4": 2}),
    "q13": ("is Kestrel Pass open in winter", {"travel-4": 2}),
    "q14": ("getting over tiredness after a long eastward flight", {"travel-1": 2}),
    "q15": ("foods that are dangerous for dogs", {"pets-3": 2, "pets-2": 1}),
    "q16": ("how often to brush a long haired cat", {"pets-1": 2}),
    "q17": ("black mould on bedroom wall", {"home-1": 2}),
    "q18": ("ZX-41 factory reset", {"code-1": 2}),
    "q19": ("T-227 deadline", {"code-2": 2}),
    "q20": ("radiators upstairs stay cold", {"code-3": 2, "home-3": 1}),
    "q21": ("when is the last 17b bus", {"code-4": 2}),
    "q22": ("warm up before sprinting", {"health-3": 2}),
    "q23": ("protect accounts if a website leaks passwords", {"tech-1": 2, "tech-2": 1}),
    "q24": ("low cost diversified investing", {"money-3": 2}),
}
# fmt: on


def main() -> None:
    with (HERE / "corpus.jsonl").open("w") as f:
        for doc_id, (title, text) in CORPUS.items():
            f.write(json.dumps({"_id": doc_id, "title": title, "text": text}) + "\n")
    with (HERE / "queries.jsonl").open("w") as f:
        for qid, (text, _) in QUERIES.items():
            f.write(json.dumps({"_id": qid, "text": text}) + "\n")
    with (HERE / "qrels" / "test.tsv").open("w") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for qid, (_, rels) in QUERIES.items():
            for doc_id, rel in rels.items():
                f.write(f"{qid}\t{doc_id}\t{rel}\n")


if __name__ == "__main__":
    main()
