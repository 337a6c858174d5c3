"""The fixed list of words that may follow a number as its unit (`72 clips`, `5 cm`, `3 hours`).

Why a fixed list: a word after a number is dropped only if it names what is measured or
counted. Any other word may change the value (`18 million`, `5 dozen`, `3 halves`, `2 times`,
`18 squared`) or join an expression (`5 and x`), and reading such a reply as the bare number
would pay for a wrong answer. Scale words are not units: `numbers` applies them (`SCALES`);
a power word right after a number (`18 squared`) is arithmetic left undone, as `7 + 9` is,
and like everything not listed here makes the text not a number.

Two parts:
- `MEASURES`: units of length, area, volume, mass, time, speed, temperature, energy, data
  and money, with their common abbreviations, singular and plural.
- `COUNTED`: plural nouns of counted things, taken once from the GSM8K and MATH training
  solutions (the plural nouns their worked answers put after a number: at least twice in
  GSM8K, three times in MATH, "ways", "integers", "arrangements"; both MIT licensed),
  without the words that change a value (`halves`, `quarters`, `dozens`, `doubles`,
  `times`, `powers`, `plus`, `minus`, `equals`) and verbs. Their singulars count too
  (`1 apple`).
"""

from __future__ import annotations

SCALES = {
    "hundred": 100, "thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12, "dozen": 12,
}
"""Words that multiply the number before them: `18 million` is 18000000, `5 dozen` is 60."""

_MEASURE_WORDS = """
millimeter millimeters millimetre millimetres centimeter centimeters centimetre centimetres meter
meters metre metres kilometer kilometers kilometre kilometres inch inches foot feet yard yards mile
miles acre acres hectare hectares liter liters litre litres milliliter milliliters millilitre
millilitres gallon gallons quart quarts pint pints cup cups ounce ounces pound pounds lbs lb gram
grams kilogram kilograms kilo kilos kgs milligram milligrams ton tons tonne tonnes tablespoon
tablespoons tbsp teaspoon teaspoons tsp second seconds sec secs minute minutes min mins hour hours hr
hrs day days week weeks month months year years decade decades century centuries night nights
mph kph kmh mpg degree degrees calorie calories watt watts kilowatt kilowatts volt volts joule joules
byte bytes kilobyte kilobytes megabyte megabytes gigabyte gigabytes terabyte terabytes dollar dollars
cent cents euro euros pound pounds yen yuan rupee rupees peso pesos pfennig pfennigs nickel nickels
dime dimes penny pennies usd eur gbp unit units lap laps step steps mile miles
"""
_SHORT_UNITS = frozenset({
    "m", "g", "s", "h", "l", "L", "K", "N", "V", "W", "J", "A", "Hz", "Pa", "cm", "mm", "km", "nm", "um", "kg",
    "mg", "ml", "mL", "cl", "dl", "ft", "yd", "mi", "lb", "oz", "hr", "ms", "kW", "kJ", "mV", "mA", "ha", "in",
    "C", "F", "yr", "am", "pm", "st", "nd", "rd", "th",
})
"""Units of one or two letters, case as written. Any other word that short after a number
is a factor or a variable (`5x`, `5 e`, `5i`, `5k`, `2ab`), or a word such as "or"."""
UNIT_PREFIXES = frozenset({"square", "sq", "cubic", "cu"})
"""Words that may come before a unit: `12 square feet`."""
UNIT_JOINERS = frozenset({"per", "a", "an", "each"})
"""Words that may join two units: `60 miles per hour`, `5 dollars an hour`."""
UNIT_SUFFIXES = frozenset({"squared", "cubed", "old"})
"""Words that may follow a unit: `25 units squared`, `18 years old`."""

COUNTED = frozenset("""
accessories acorns administrators adults airplanes albums alligators animals answers antacids ants
apartments appetizers apples apps aprons aquariums arms arrangements artichokes articles artifacts
artworks asparagus athletes attendees audiobooks aunts avocados awards babies backpacks baggies bags
baguettes bales balloons balls bananas bandages bands barrels bars baseballs basketballs baskets
batches bathrooms baths batteries beads beakers beans bears beats bedbugs bedrooms beds bees beetles
beignets belts benches berries bicycles bikes billboards bills birds biscuits blackbirds blankets
blisters blocks blouses blueberries boats bollards bolts bones bonnets books bottlecaps bottles
bouquets bowls boxes boxwoods boys bracelets braids branches breakfasts breaks bricks brochures
brothers brownies bubbles buckets bugs builders buildings bulbs bunches bundles bunnies burgers
burritos buses bushels bushes businesses butterflies buttons buyers cabinets cakes calls camels
campers candies candles canes cans cantaloupes caps capsules caramels cards carnations carpets
carriages carrots cars cartons cases caterpillars cats chairs champions channels chapters characters
charges cheesecakes cheetahs chefs cherries chests chickens chicks chips chocolates choices chores
circles citations claims clarinets classes classmates classrooms claws clerks clients clippings
clips clothes clotheslines clouds clovers cloves clowns clusters coals coats coconuts coins colors
combinations comics complaints computers cones consonants contacts containers cookies copies corns
coughs counters countries couples coupons courses cousins cows crabs crackers crafts cranberries
craters crates crayons credits crickets croissants crops croutons crows cubes cucumbers cupcakes
cups curlers customers cuttlebones daisies daps daughters decorations deliveries demerits desks
desserts devices diagonals diapers diaries digits dinners dips dishes dividers divisors doctors dogs
dolls dolphins donations donuts doors doses dots doughnuts drawings dreams dresses drinks driveways
drops drummers drums ducklings ducks earrings ears edges eggplants eggs elements elephants emails
employees envelopes episodes erasers exams exercises eyes faces factors families farmhands farthings
feathers feedings females fences figurines files filets fingers firecrackers fireflies fires
fireworks fishes flags flats flavors fleas flies flights flips floors flowers flutes flyers foldings
followers footprints forks foxes friends fries frogs fronds fruits galleries games gates geckos gems
gemstones gifts gigs gingerbreads giraffes girls glasses gnomes goals goats grades grains grapes
groups guests guitars gumballs guppies gusts haircuts hairs halls hamburgers handfuls hands
handshakes hares hats heads hearts heights hens highlighters hikes hits hives holes homes honeydews
hoodies horses horseshoes hotdogs households houses hushpuppies huskies individuals inhabitants
insects instances instruments integers islands items jackets jars jellybeans jerseys jewels joggers
jokes jugs jumps kangaroos kernels keys kids kindergartners kitchens kits kittens knacks knicks
knives knocks koalas kunks ladders ladies lambs lamps laptops lattes layers leaves legos legs lemons
leopards lessons letters levels licks lightbulbs lighters lilies limbs limes lines links lions lives
lizards llamas loads loaves logs lollipops lunches macarons macaroons machines magazines maggots
magnets males managers mangoes marbles marigolds markers marks marshmallows masks matchboxes matches
matchsticks meals meatballs medals melons members meows messages milkshakes millipedes minks minnows
mistakes models monkeys monsters motorcycles mountains movies muffins multiples mushrooms nails
napkins necklaces neighbors nephews newspapers notebooks notes nougats novels nuggets numbers nurses
nuts objects omelets onions options oranges orchards orchids orcs orderings orders outcomes outfits
oysters packages packets packs pages pails paintings pairs pallets pamphlets pancakes pandas panels
pans pants papayas paperclips papers paragraphs parents parrots parsecs parsnips participants parts
passengers passes pastries patches patients patrons pauses paws peaches peanuts pearls pears pebbles
pencils penguins pens people peppers permits permutations persons pesetas petals pets petunias
phones photographs photos phrases pianists pickles pictures pieces pies pigeons piglets pigs piles
pills pinecones pines pins pitches pixels pizzas places planks plants plates players plums pockets
pods pointers points pollywogs poodles portions possibilities postcards posters posts potatoes pots
pouches presents pretzels primes prints problems products pumpkins pupils puppies pups pushups
puzzles pythons questions quilts quizzes rabbits racers races racquets rahs raisins raspberries rats
reams records rectangles reflections relatives repacks reps requests residents residues results
rhinestones riddles rides ridges rings robots rocks rolls roommates rooms roosters roots roses
rounds rows rungs runners sacks sales samples sandcastles sandwiches saplings sausages scallops
scarves schools scoops seagulls seashells seasons seats sections seedlings seeds segments sentences
sequences sequins servings sessions sets settings shares sharks sheets shells shelves shirts shoes
shorts shots showers siblings sides singers sips sisters sites situps skeletons skips skirts sleeves
slices slots snacks snails snakes snapdragons snowballs snowflakes soaps socks sodas soldiers
solutions songs sonnets sons spaces sparklers spears spiders spokes spools spoons sports spots
squares squats squirrels stairs stamps stanzas stars stations statues steaks stems steps stickers
sticks stingrays stitches stops stores stories strands strawberries straws streetlights streets
strings stripes strips strokes students stuffies subjects subscriptions suckers suitcases sunflowers
surfers swallows swans sweaters sweets systems tables tabs tacks tadpoles tanks tarantulas tasks
tattoos teachers teacups teams tears teddies teenagers televisions tents terms terriers teslas tests
tetras textbooks texts thumbtacks tickets ticks ties tigers tiles tins tires tissues toads toddlers
toenails toes tokens tomatoes tools toothbrushes toppings tosses touchdowns tourists towels towers
toys trains trays treats trees triangles trikes trips trolls trophies truckloads trucks truffles
trumpets tubes tubs tulips turkeys turns turtles twigs unicorns urns vacations values vampires vans
vegetables vehicles vents vertices vibrations videos visitors visits volunteers votes waiters walls
walnuts wands washers washes watches watermelons ways weasels websites weeds weekdays whales wheels
whiskers whistlers whoosits widgets wights wigs windows wings wipes words workers worms yolks zebras
zeros zits zombies zucchinis
""".split())


def _singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses", "oes")):
        return word[:-2]
    return word[:-1]


MEASURES = frozenset(_MEASURE_WORDS.split())
UNITS = MEASURES | COUNTED | frozenset(_singular(word) for word in COUNTED)
"""Every word (lower case, three letters or more) that may follow a number as its unit."""


def is_short_unit(word: str) -> bool:
    """A unit of one or two letters (`m`, `kg`): in a gold answer, a variable unless written as text."""
    return word in _SHORT_UNITS


def is_unit_word(word: str) -> bool:
    """One word of a unit: a listed unit (any case), or a listed short unit (case as written)."""
    return word in _SHORT_UNITS or (len(word) > 2 and word.lower() in UNITS)
